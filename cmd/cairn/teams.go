package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/model"
)

// newPrincipalCmd is `cairn principal create|list|show|delete`.
func newPrincipalCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "principal",
		Short: "Manage the users and service accounts API tokens belong to (admin)",
	}
	var kind string
	create := &cobra.Command{
		Use:     "create NAME [--kind service]",
		Short:   "Create a principal: a user, or with --kind service a service account",
		Example: "  cairn principal create ci --kind service",
		Args:    cobra.ExactArgs(1),
	}
	create.Flags().StringVar(&kind, "kind", "user", "user or service")
	rc := newRemote(a, create, formatTable)
	create.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rc.client()
		if err != nil {
			return err
		}
		p, err := c.CreatePrincipal(cmd.Context(), model.PrincipalInput{Name: args[0], Kind: model.PrincipalKind(kind)})
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return rc.print(p, func(w io.Writer) error { return printPrincipals(w, *p) })
	}

	list := &cobra.Command{Use: "list", Short: "List every principal", Args: cobra.NoArgs}
	rl := newRemote(a, list, formatTable)
	list.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rl.client()
		if err != nil {
			return err
		}
		ps, err := c.ListPrincipals(cmd.Context())
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return rl.print(model.PrincipalList{Principals: ps}, func(w io.Writer) error { return printPrincipals(w, ps...) })
	}

	show := &cobra.Command{Use: "show NAME|ID", Short: "Show one principal", Args: cobra.ExactArgs(1)}
	rs := newRemote(a, show, formatTable)
	show.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rs.client()
		if err != nil {
			return err
		}
		p, err := c.GetPrincipal(cmd.Context(), args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return rs.print(p, func(w io.Writer) error { return printPrincipals(w, *p) })
	}

	del := &cobra.Command{Use: "delete NAME|ID", Short: "Delete a principal; its tokens stop working", Args: cobra.ExactArgs(1)}
	rd := newRemote(a, del, formatTable)
	del.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rd.client()
		if err != nil {
			return err
		}
		if err := c.DeletePrincipal(cmd.Context(), args[0]); err != nil {
			return apiFailure(a, err, nil)
		}
		return rd.print(map[string]any{"principal": args[0], "deleted": true}, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "principal %s deleted, and its tokens\n", args[0])
			return err
		})
	}
	cmd.AddCommand(create, list, show, del)
	return cmd
}

func printPrincipals(w io.Writer, ps ...model.Principal) error {
	t := newTable(w, "NAME", "KIND", "ID", "CREATED")
	for _, p := range ps {
		t.row(p.Name, string(p.Kind), p.ID, formatTime(p.CreatedAt))
	}
	return t.flush()
}

const graphAuthorWarning = "graph-author may upload graphs and edit cluster settings: that is the same as\n" +
	"running any command, as root, on every node in its scope. Give it as you would root."

// newTokenCmd is `cairn token create|list|revoke`.
func newTokenCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage API tokens: scoped roles of a principal (admin)",
	}
	var (
		roles     []string
		stacks    []string
		clusters  []string
		releases  []string
		selector  string
		expiresIn time.Duration
	)
	create := &cobra.Command{
		Use:   "create PRINCIPAL --role ROLE [--stack S]... [--cluster C]... [--release R]... [--selector k=v,...] [--expires 720h]",
		Short: "Create a token for a principal; it is printed once",
		Long: "Create makes an API token acting as PRINCIPAL with each --role (viewer, planner,\n" +
			"deployer, approver, graph-author, admin), all scoped to the --stack, --cluster and\n" +
			"--release ids given and to the resources whose labels match --selector (key=value\n" +
			"pairs, all of which must match). Without any scope the roles hold everywhere.\n" +
			"deployer includes planner, which includes viewer; approver and graph-author include\n" +
			"viewer; admin includes everything.\n\n" +
			graphAuthorWarning + "\n\n" +
			"The token is printed once: the server keeps only its SHA-256.",
		Example: "  cairn token create ci --role deployer --stack web --expires 720h\n" +
			"  cairn token create dev --role viewer --selector env=prod",
		Args: cobra.ExactArgs(1),
	}
	fs := create.Flags()
	fs.StringArrayVar(&roles, "role", nil, "a role (repeat for several): viewer, planner, deployer, approver, graph-author, admin")
	fs.StringArrayVar(&stacks, "stack", nil, "a stack (id or name) the roles hold on (repeatable)")
	fs.StringArrayVar(&clusters, "cluster", nil, "a cluster id the roles hold on (repeatable)")
	fs.StringArrayVar(&releases, "release", nil, "a release id the roles hold on (repeatable)")
	fs.StringVar(&selector, "selector", "", "labels (key=value[,key=value]) of the stacks, clusters and releases the roles hold on")
	fs.DurationVar(&expiresIn, "expires", 0, "how long the token is valid (e.g. 720h; default: until revoked)")
	rc := newRemote(a, create, formatTable)
	create.RunE = func(cmd *cobra.Command, args []string) error {
		if len(roles) == 0 {
			return fmt.Errorf("give at least one --role")
		}
		if expiresIn < 0 {
			return fmt.Errorf("--expires %s: want a positive duration", expiresIn)
		}
		c, err := rc.client()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		stackIDs := make([]string, 0, len(stacks))
		for _, ref := range stacks {
			st, err := resolveStack(ctx, c, ref)
			if err != nil {
				return apiFailure(a, err, nil)
			}
			stackIDs = append(stackIDs, st.ID)
		}
		in := model.TokenInput{Principal: args[0]}
		for _, role := range roles {
			in.Roles = append(in.Roles, model.Grant{Role: model.Role(role), Stacks: stackIDs, Clusters: clusters, Releases: releases, Selector: selector})
			if model.Role(role) == model.RoleGraphAuthor {
				fmt.Fprintln(a.stderr, "Warning: "+strings.ReplaceAll(graphAuthorWarning, "\n", " "))
			}
		}
		if expiresIn > 0 {
			at := time.Now().Add(expiresIn).UTC()
			in.ExpiresAt = &at
		}
		tok, err := c.CreateToken(ctx, in)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return rc.print(tok, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "# token %s of %s (shown once; the server keeps only its hash)\n%s\n", tok.ID, tok.Record.Principal, tok.Token)
			return err
		})
	}

	list := &cobra.Command{Use: "list", Short: "List every token (never the token itself)", Args: cobra.NoArgs}
	rl := newRemote(a, list, formatTable)
	list.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rl.client()
		if err != nil {
			return err
		}
		ts, err := c.ListTokens(cmd.Context())
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return rl.print(model.TokenList{Tokens: ts}, func(w io.Writer) error {
			t := newTable(w, "ID", "PRINCIPAL", "PREFIX", "ROLES", "EXPIRES", "LAST USED")
			for _, tk := range ts {
				t.row(tk.ID, tk.Principal, tk.Prefix+"…", grantsText(tk.Roles), formatTimePtr(tk.ExpiresAt), formatTimePtr(tk.LastUsed))
			}
			return t.flush()
		})
	}

	revoke := &cobra.Command{Use: "revoke ID", Short: "Revoke a token: refused at once (within 2s on other servers)", Args: cobra.ExactArgs(1)}
	rr := newRemote(a, revoke, formatTable)
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rr.client()
		if err != nil {
			return err
		}
		if err := c.RevokeToken(cmd.Context(), args[0]); err != nil {
			return apiFailure(a, err, nil)
		}
		return rr.print(map[string]any{"token": args[0], "revoked": true}, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "token %s revoked\n", args[0])
			return err
		})
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// grantsText says grants in a line: "deployer(stacks=a,b selector=env=prod)".
func grantsText(gs []model.Grant) string {
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		var scope []string
		for name, ids := range map[string][]string{"stacks": g.Stacks, "clusters": g.Clusters, "releases": g.Releases} {
			if len(ids) > 0 {
				scope = append(scope, name+"="+strings.Join(ids, ","))
			}
		}
		if g.Selector != "" {
			scope = append(scope, "selector="+g.Selector)
		}
		if len(scope) == 0 {
			scope = []string{"everywhere"}
		}
		slices.Sort(scope)
		parts = append(parts, fmt.Sprintf("%s(%s)", g.Role, strings.Join(scope, " ")))
	}
	return strings.Join(parts, " ")
}

// newWhoamiCmd is `cairn whoami`.
func newWhoamiCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "whoami", Short: "Show who the API token acts as and its roles", Args: cobra.NoArgs}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		who, err := c.Whoami(cmd.Context())
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(who, func(w io.Writer) error {
			name := who.Principal
			if name == "" {
				name = "(the server's CAIRN_API_TOKEN)"
			}
			_, err := fmt.Fprintf(w, "principal: %s\nroles:     %s\n", name, grantsText(who.Roles))
			return err
		})
	}
	return cmd
}

// newAuditCmd is `cairn audit`.
func newAuditCmd(a *app) *cobra.Command {
	var (
		f        model.AuditFilter
		since    string
		asJSON   bool
		pageFrom int64
	)
	cmd := &cobra.Command{
		Use:   "audit [--principal P] [--stack S] [--cluster C] [--execution E] [--since 24h] [--limit N]",
		Short: "List the audit trail: every change made through the API, and every refusal",
		Long: "Audit lists, newest first, who changed what through the API and how it ended,\n" +
			"and every request refused (401, 403). Admins read every entry; anyone else the\n" +
			"entries on the stacks and clusters it may view, and its own.",
		Example: "  cairn audit --principal ci --since 24h\n  cairn audit --stack web --json",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&f.Principal, "principal", "", "only this principal's entries")
	fs.StringVar(&f.Stack, "stack", "", "only entries on this stack (id)")
	fs.StringVar(&f.Cluster, "cluster", "", "only entries on this cluster")
	fs.StringVar(&f.Execution, "execution", "", "only entries on this execution")
	fs.StringVar(&since, "since", "", "only entries since this RFC 3339 time or this long ago (24h)")
	fs.IntVar(&f.Limit, "limit", 100, "at most this many entries (1-1000)")
	fs.Int64Var(&pageFrom, "before", 0, "entries before this id (the next page)")
	fs.BoolVar(&asJSON, "json", false, "print JSON (the same as -o json)")
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if asJSON {
			r.out.format = formatJSON
		}
		if since != "" {
			if d, err := time.ParseDuration(since); err == nil {
				f.Since = time.Now().Add(-d)
			} else if t, err := time.Parse(time.RFC3339, since); err == nil {
				f.Since = t
			} else {
				return fmt.Errorf("--since %q: want an RFC 3339 time or a duration", since)
			}
		}
		f.Before = pageFrom
		c, err := r.client()
		if err != nil {
			return err
		}
		list, err := c.Audit(cmd.Context(), f)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(list, func(w io.Writer) error {
			t := newTable(w, "AT", "PRINCIPAL", "METHOD", "ROUTE", "TARGET", "STATUS", "REQUEST")
			for _, e := range list.Entries {
				t.row(formatTime(e.At), orDash(e.Principal), e.Method, e.Route, orDash(auditTarget(e)), fmt.Sprintf("%d %s", e.Status, e.Code), e.RequestID)
			}
			if err := t.flush(); err != nil {
				return err
			}
			if list.Next > 0 {
				_, err := fmt.Fprintf(w, "\nmore: cairn audit --before %d\n", list.Next)
				return err
			}
			return nil
		})
	}
	return cmd
}

// auditTarget says what an entry acted on.
func auditTarget(e model.AuditEntry) string {
	var parts []string
	for _, p := range [][2]string{{"stack", e.Stack}, {"cluster", e.Cluster}, {"release", e.Release}, {"execution", e.Execution}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	return strings.Join(parts, " ")
}
