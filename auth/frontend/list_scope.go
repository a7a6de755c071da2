package frontend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/temporalio/sqlparser"

	"github.com/hanzoai/visor-fleet/contract"
)

// listScoped says whether a tenant's visibility query (List or Count)
// can only match its own orgs' pools or the cluster workflows: a listing
// of the whole namespace would show every org's pool IDs, projects,
// services and search attributes.
//
// The query is parsed as the frontend parses it, and is scoped when its
// WHERE clause holds, at the top level or in every branch of an OR, a
// conjunct VisorOrg = '<own org>', VisorOrg IN (<own orgs>) or
// WorkflowType = 'ClusterWorkflow' (clusters may be read by any tenant).
// Anything else — an empty query, NOT, a comparison the other way round,
// a parse error — is refused, with the fix in the error.
func listScoped(query string, orgs []string) error {
	fix := fmt.Sprintf("a tenant's query must be limited to its own orgs: start it with %s = '%s' AND (…), or list clusters with WorkflowType = '%s'",
		contract.SAOrg, firstOr(orgs, "<org>"), contract.ClusterWorkflow)
	where := strings.TrimSpace(query)
	lower := strings.ToLower(where)
	if where == "" || strings.HasPrefix(lower, "order by") || strings.HasPrefix(lower, "group by") {
		return fmt.Errorf("query %q lists the whole namespace: %s", query, fix)
	}
	stmt, err := sqlparser.Parse("select * from visibility where " + where)
	if err != nil {
		return fmt.Errorf("query %q does not parse (%v): %s", query, err, fix)
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.Where == nil || !scopedExpr(sel.Where.Expr, orgs) {
		return fmt.Errorf("query %q may match other orgs' workflows: %s", query, fix)
	}
	return nil
}

// scopedExpr: every row the expression matches is one of orgs' pools or
// a cluster workflow.
func scopedExpr(e sqlparser.Expr, orgs []string) bool {
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return scopedExpr(x.Expr, orgs)
	case *sqlparser.AndExpr:
		return scopedExpr(x.Left, orgs) || scopedExpr(x.Right, orgs)
	case *sqlparser.OrExpr:
		return scopedExpr(x.Left, orgs) && scopedExpr(x.Right, orgs)
	case *sqlparser.ComparisonExpr:
		col, ok := x.Left.(*sqlparser.ColName)
		if !ok || !col.Qualifier.IsEmpty() {
			return false
		}
		switch name := col.Name.String(); {
		case name == contract.SAOrg && x.Operator == sqlparser.EqualStr:
			v, ok := stringValue(x.Right)
			return ok && slices.Contains(orgs, v)
		case name == contract.SAOrg && x.Operator == sqlparser.InStr:
			tuple, ok := x.Right.(sqlparser.ValTuple)
			if !ok || len(tuple) == 0 {
				return false
			}
			for _, item := range tuple {
				if v, ok := stringValue(item); !ok || !slices.Contains(orgs, v) {
					return false
				}
			}
			return true
		case name == "WorkflowType" && x.Operator == sqlparser.EqualStr:
			v, ok := stringValue(x.Right)
			return ok && v == contract.ClusterWorkflow
		}
	}
	return false
}

func stringValue(e sqlparser.Expr) (string, bool) {
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.StrVal {
		return "", false
	}
	return string(v.Val), true
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
