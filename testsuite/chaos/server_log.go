package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"time"
)

// whyExited explains a start that ended by itself: the last line visor
// dev wrote (its "visor: ..." error) and the server's fatal, if any.
func whyExited(devLog, serverLog string, since time.Time) string {
	var why []string
	if raw, err := os.ReadFile(devLog); err == nil {
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if last := lines[len(lines)-1]; last != "" {
			why = append(why, "last output: "+last)
		}
	}
	if fatal := lastFatal(serverLog, since); fatal != "" {
		why = append(why, fatal)
	}
	return strings.Join(why, "; ")
}

// lastFatal finds the Temporal server's last fatal line at or after since
// in its JSON log (visor dev's temporal.log). The server exits on a fatal
// without a word on visor dev's own output, so a start that "exited by
// itself" is explained only there.
func lastFatal(path string, since time.Time) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var found string
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"level":"fatal"`) {
			continue
		}
		var e struct {
			TS    time.Time `json:"ts"`
			Msg   string    `json:"msg"`
			Error string    `json:"error"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.TS.Before(since.Add(-time.Second)) {
			continue
		}
		found = "server fatal: " + e.Msg
		if e.Error != "" {
			found += ": " + e.Error
		}
	}
	return found
}
