package kubeplane

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

type clusterRoleDoc = rbacv1.ClusterRole

var yamlDocSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// ReadClusterRoles reads the ClusterRoles of a (multi-document) YAML
// manifest; other kinds in it are ignored. A manifest without one is an
// error naming the file.
func ReadClusterRoles(path string) ([]rbacv1.ClusterRole, error) {
	return readClusterRoles(path)
}

func readClusterRoles(path string) ([]clusterRoleDoc, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeplane: read RBAC manifest: %w", err)
	}
	return parseClusterRoles(path, raw)
}

// parseClusterRoles is readClusterRoles over bytes; path names them.
func parseClusterRoles(path string, raw []byte) ([]clusterRoleDoc, error) {
	var roles []clusterRoleDoc
	for i, doc := range yamlDocSeparator.Split(string(raw), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("kubeplane: %s document %d: %w", path, i+1, err)
		}
		if meta.Kind != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			return nil, fmt.Errorf("kubeplane: %s document %d: %w", path, i+1, err)
		}
		roles = append(roles, role)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("kubeplane: %s holds no ClusterRole", path)
	}
	return roles, nil
}

// applyConnectorRBAC creates the manifest's ClusterRoles and binds user to
// each, returning the role names once the bindings are in force.
func applyConnectorRBAC(ctx context.Context, admin *rest.Config, roles []clusterRoleDoc, user string) ([]string, error) {
	var names []string
	for _, role := range roles {
		if err := GrantClusterRole(ctx, admin, role, user); err != nil {
			return nil, err
		}
		names = append(names, role.Name)
	}
	return names, nil
}

// GrantClusterRole creates role (replacing one of the same name) and a
// ClusterRoleBinding of it to user, then waits until the authorizer lets
// user do what each rule says: RBAC caches bindings, and a test acting
// before they are seen would fail for the wrong reason.
func GrantClusterRole(ctx context.Context, admin *rest.Config, role rbacv1.ClusterRole, user string) error {
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	role = *role.DeepCopy()
	role.ResourceVersion = ""
	if err := createOrReplace(ctx, client, &role); err != nil {
		return fmt.Errorf("kubeplane: create ClusterRole %s: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "--" + sanitize(user)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubeplane: bind ClusterRole %s to %s: %w", role.Name, user, err)
	}
	return waitAllowed(ctx, client, role, user)
}

func createOrReplace(ctx context.Context, client kubernetes.Interface, role *rbacv1.ClusterRole) error {
	_, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	old, err := client.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	role.ResourceVersion = old.ResourceVersion
	_, err = client.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
	return err
}

func sanitize(s string) string {
	return strings.NewReplacer(":", "-", "@", "-", "/", "-").Replace(strings.ToLower(s))
}

// waitAllowed polls SubjectAccessReviews for one verb/resource of each rule.
func waitAllowed(ctx context.Context, client kubernetes.Interface, role rbacv1.ClusterRole, user string) error {
	for _, rule := range role.Rules {
		review := accessReviewFor(rule, user)
		if review == nil {
			continue
		}
		for {
			got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("kubeplane: check %s's access: %w", user, err)
			}
			if got.Status.Allowed {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kubeplane: ClusterRole %s not in force for %s (%+v): %w",
					role.Name, user, review.Spec, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func accessReviewFor(rule rbacv1.PolicyRule, user string) *authorizationv1.SubjectAccessReview {
	spec := authorizationv1.SubjectAccessReviewSpec{User: user}
	if len(rule.Verbs) == 0 {
		return nil
	}
	verb := rule.Verbs[0]
	switch {
	case len(rule.NonResourceURLs) > 0:
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: rule.NonResourceURLs[0], Verb: verb}
	case len(rule.Resources) > 0 && len(rule.APIGroups) > 0:
		resource, sub, _ := strings.Cut(rule.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{Group: rule.APIGroups[0], Resource: resource, Subresource: sub, Verb: verb}
		if len(rule.ResourceNames) > 0 {
			attrs.Name = rule.ResourceNames[0]
		}
		spec.ResourceAttributes = attrs
	default:
		return nil
	}
	return &authorizationv1.SubjectAccessReview{Spec: spec}
}
