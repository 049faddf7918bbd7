package engine

import "context"

// DefaultTenant owns everything in a single-user installation.
const DefaultTenant = "default"

type tenantKey struct{}

// WithTenant returns a context acting for tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant ctx acts for, DefaultTenant when none was set.
func TenantFrom(ctx context.Context) string {
	if t, ok := ctx.Value(tenantKey{}).(string); ok && t != "" {
		return t
	}
	return DefaultTenant
}
