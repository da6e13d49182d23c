package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/model"
)

// newNodeCmd is `cairn node`: the credentials of agent nodes.
func newNodeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Work with the agent nodes of a cluster (their tokens)",
	}
	cmd.AddCommand(newNodeTokenCmd(a))
	return cmd
}

// newNodeTokenCmd is `cairn node token CLUSTER NODE [--rotate|--revoke]`.
func newNodeTokenCmd(a *app) *cobra.Command {
	var rotate, revoke bool
	cmd := &cobra.Command{
		Use:   "token CLUSTER NODE [--rotate | --revoke]",
		Short: "Issue, rotate or revoke the token an agent node's `cairn agent` presents",
		Long: "Token issues a token for an agent node (replacing any it had) and prints, in the\n" +
			"form of /etc/cairn/agent.env, what its agent needs to reach the server: the server's\n" +
			"URL, the token and the fingerprint of the server's certificate to pin. The token is\n" +
			"shown once: the server keeps only its SHA-256. --rotate replaces the token of a node\n" +
			"that has one (the old one is refused from then on); --revoke deletes it, and the\n" +
			"agent's next request is refused.",
		Example: "  cairn node token env-1 node-1 >> /etc/cairn/agent.env\n" +
			"  cairn node token env-1 node-1 --rotate -o json\n" +
			"  cairn node token env-1 node-1 --revoke",
		Args: cobra.ExactArgs(2),
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the node's existing token (404 when it has none)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "delete the node's token: its agent is refused at once")
	cmd.MarkFlagsMutuallyExclusive("rotate", "revoke")
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cluster, node := args[0], args[1]
		c, err := r.client()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if revoke {
			if err := c.RevokeNodeToken(ctx, cluster, node); err != nil {
				return apiFailure(a, err, nil)
			}
			return r.print(map[string]any{"cluster": cluster, "node": node, "revoked": true}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "token of node %s of cluster %s revoked\n", node, cluster)
				return err
			})
		}
		issue := c.IssueNodeToken
		if rotate {
			issue = c.RotateNodeToken
		}
		tok, err := issue(ctx, cluster, node)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(tok, func(w io.Writer) error { return printAgentEnv(w, r.serverURL(), tok) })
	}
	return cmd
}

// printAgentEnv writes a token as lines of an agent's environment file.
func printAgentEnv(w io.Writer, server string, tok *model.NodeToken) error {
	fmt.Fprintf(w, "# cairn agent for node %s of cluster %s (the token is shown once)\n", tok.Node, tok.Cluster)
	fmt.Fprintf(w, "CAIRN_SERVER=%s\nCAIRN_CLUSTER=%s\nCAIRN_NODE=%s\nCAIRN_NODE_TOKEN=%s\n", server, tok.Cluster, tok.Node, tok.Token)
	if tok.ServerFingerprint != "" {
		_, err := fmt.Fprintf(w, "CAIRN_SERVER_FINGERPRINT=%s\n", tok.ServerFingerprint)
		return err
	}
	_, err := fmt.Fprintln(w, "# the server's API is plain HTTP: no certificate to pin")
	return err
}
