package types

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	// The time zone database is compiled in, so a window's zone resolves
	// the same on a worker image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// cronParser reads the five standard fields and descriptors (@daily,
// @weekly, …) but not @every: a window is a calendar, not an interval.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// scheduleReference is a fixed instant validation checks a schedule
// against, so Validate does not read the clock.
var scheduleReference = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// compiled caches CompileSchedule's successes: loading a zone reads the
// time zone database, which costs far more than evaluating a schedule,
// and the law evaluates the same few windows at every decision. The
// answer depends only on the key, so the cache cannot change a result.
var compiled struct {
	sync.Mutex
	m map[string]cron.Schedule
}

// maxCompiledCached bounds the cache; past it schedules are compiled
// every time (still correct, only slower).
const maxCompiledCached = 4096

// CompileSchedule parses a window's cron expression in its time zone
// (empty means UTC). Errors say "schedule …" or "timeZone …" so callers
// can name the field. The result is shared: do not modify it.
func CompileSchedule(expr, zone string) (cron.Schedule, error) {
	key := zone + "\x00" + expr
	compiled.Lock()
	s, ok := compiled.m[key]
	compiled.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileSchedule(expr, zone)
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if compiled.m == nil {
		compiled.m = map[string]cron.Schedule{}
	}
	if len(compiled.m) < maxCompiledCached {
		compiled.m[key] = s
	}
	compiled.Unlock()
	return s, nil
}

func compileSchedule(expr, zone string) (cron.Schedule, error) {
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, errors.New("schedule: give the zone in timeZone, not as a TZ= prefix")
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, errors.New("schedule: @every is an interval, not a calendar; use a cron expression")
	}
	if len(expr) > maxCronLen {
		return nil, fmt.Errorf("schedule: %d characters, at most %d", len(expr), maxCronLen)
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("schedule %q: not a calendar schedule", expr)
	}
	spec.Location = loc
	// cron gives up after five years: a schedule that finds nothing in
	// that time (30 February) never fires.
	if spec.Next(scheduleReference).IsZero() {
		return nil, fmt.Errorf("schedule %q: never fires", expr)
	}
	return spec, nil
}

// LoadZone resolves an IANA zone name; empty means UTC. "Local" is
// refused: it would differ from worker to worker.
func LoadZone(zone string) (*time.Location, error) {
	switch zone {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`timeZone "Local": name an IANA zone such as "Europe/Berlin"; Local differs between workers`)
	}
	if len(zone) > maxNameLen*2 {
		return nil, fmt.Errorf("timeZone: %d characters, at most %d", len(zone), maxNameLen*2)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("timeZone %q: not a zone in the time zone database", zone)
	}
	return loc, nil
}
