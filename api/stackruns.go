package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// Snapshot kinds in the store.
const (
	SnapshotPackage = "package"
	SnapshotGraph   = "graph"
)

// stackBody is what an apply or dry-run body brings: a stored package
// (hash) or the stack's URLs to read one from, the parameters, and the refs
// the package needs that have no value.
type stackBody struct {
	hash                       string
	urls                       []string
	params                     model.ApplyParams
	missingEnv, missingSecrets []string
	missingVars                []string
	// given are the secrets this request brought, which an apply keeps
	// for the stack (params.Secrets has the stack's kept ones as well).
	given map[string]string
}

// stackPackage reads the package of an apply or dry-run from the request
// body (bare, or in an apply envelope with its parameters), validates it
// and stores it as a snapshot, returning its hash. Nothing is stored when
// the package is invalid; the 422 carries every error and, with
// withSummary, the summary of what could be read. With an empty body the
// package is the stack's URLs: they are checked against the allowed
// schemes here and returned, and the execution reads and validates them
// (so a slow or large source never holds a request). The parameters are
// those given with the stack's kept secrets under them.
func (s *server) stackPackage(c echo.Context, st *model.Stack, withSummary, allowEmpty bool) (stackBody, error) {
	src, err := readDocument(c, true)
	if err != nil {
		return stackBody{}, err
	}
	src, upload, params, err := unwrapEnvelope(src)
	if err != nil {
		return stackBody{}, err
	}
	if err := s.checkSecretsSealed(params); err != nil {
		return stackBody{}, err
	}
	given := params.Secrets
	kept, err := s.stackSecrets(c.Request().Context(), st.ID)
	if err != nil {
		return stackBody{}, err
	}
	params = withStackSecrets(params, kept)
	ctx := c.Request().Context()
	if upload != "" {
		hash, sum, err := s.uploadPackage(ctx, st, upload, allowEmpty)
		if err != nil {
			return stackBody{}, err
		}
		missingEnv, missingSecrets := s.missingOf(sum.Env, sum.Secrets, params)
		var missingVars []string
		for _, k := range sum.Vars {
			if _, ok := params.Vars[k]; !ok {
				missingVars = append(missingVars, k)
			}
		}
		return stackBody{hash: hash, params: params, given: given, missingEnv: missingEnv, missingSecrets: missingSecrets, missingVars: missingVars}, nil
	}
	if src == nil {
		if len(st.URLs) == 0 {
			return stackBody{}, badRequest("no package: send one in the body, or give stack %q URLs to read it from", st.ID)
		}
		var details []model.ErrorDetail
		for i, u := range st.URLs {
			if err := s.fetch.Check(u); err != nil {
				details = append(details, model.ErrorDetail{Document: "stack " + st.ID, Path: fmt.Sprintf("urls[%d]", i), Message: err.Error()})
			}
		}
		if len(details) > 0 {
			return stackBody{}, invalid("the stack's URLs cannot be read", details)
		}
		return stackBody{urls: st.URLs, params: params, given: given}, nil
	}
	sources := []graphs.Source{*src}
	docs, err := graphs.Parse(s.parseOptions(), sources...)
	if err != nil {
		var extra map[string]any
		if withSummary {
			extra = map[string]any{"summary": summarize(docs)}
		}
		return stackBody{}, invalidDocuments("package", err, extra)
	}
	if len(docs.Package.Resources) == 0 && !allowEmpty {
		// Applying nothing would delete everything the stack holds; that
		// is what DELETE /v1/stacks/{id} is for, so say so rather than do it.
		return stackBody{}, invalid("package is invalid", []model.ErrorDetail{{Document: sources[0].Name,
			Message: "the package has no resources: applying it would delete everything the stack holds; delete the stack to do that"}})
	}
	missingEnv, missingSecrets := s.missingRefs(docs, params)
	missingVars := docs.MissingVars(params.Vars)
	if len(docs.Graphs) > 0 {
		return stackBody{}, invalid("package is invalid", []model.ErrorDetail{{Document: sources[0].Name,
			Message: "graphs are uploaded to a release, cluster or plugin, not applied to a stack"}})
	}
	// The snapshot keeps the sources as they came (Jsonnet evaluated), in
	// the executor's snapshot format, with the package parsed here, which
	// the prepare activity decodes instead of parsing the sources again.
	content, err := prepare.EncodeSources(ctx, docs, s.evaluated, sources...)
	if err != nil {
		// Jsonnet evaluated a moment ago; failing now is the sandbox's fault.
		return stackBody{}, internalError(err)
	}
	hash, err := s.store.PutSnapshot(ctx, SnapshotPackage, content)
	if err != nil {
		return stackBody{}, storeError(err, "package snapshot")
	}
	return stackBody{hash: hash, params: params, given: given, missingEnv: missingEnv, missingSecrets: missingSecrets, missingVars: missingVars}, nil
}

// stackCluster is the cluster a run of stack st goes to: ?cluster= (the
// cluster whose nodes a package's targeted resources run on; it must
// exist), else the one the stack recorded. Another cluster than the
// recorded one is refused with 409 naming both while the stack has
// resources on its nodes (model.Stack.TargetCluster; the run's Prepare
// checks it again under the stack's lock).
func (s *server) stackCluster(c echo.Context, st *model.Stack) (string, error) {
	id := c.QueryParam("cluster")
	if id != "" {
		if _, err := s.store.GetCluster(c.Request().Context(), id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", badRequest("cluster %q does not exist", id)
			}
			return "", storeError(err, "cluster")
		}
	}
	target, err := st.TargetCluster(id)
	var mismatch *model.ClusterMismatchError
	if errors.As(err, &mismatch) {
		return "", &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err,
			Extra: map[string]any{"clusterId": mismatch.Recorded, "requestedClusterId": mismatch.Requested}}
	}
	return target, err
}

func (s *server) stackOf(c echo.Context) (*model.Stack, error) {
	id := c.Param("id")
	st, err := s.store.GetStack(c.Request().Context(), id)
	if err != nil {
		return nil, storeError(err, fmt.Sprintf("stack %q", id))
	}
	return st, nil
}

// stackRun is what an apply or dry-run of the request's stack runs: the
// stack (stackOf), the cluster it goes to (stackCluster) and the package
// with its parameters (stackPackage, with withSummary and allowEmpty).
func (s *server) stackRun(c echo.Context, withSummary, allowEmpty bool) (*model.Stack, string, stackBody, error) {
	st, err := s.stackOf(c)
	if err != nil {
		return nil, "", stackBody{}, err
	}
	clusterID, err := s.stackCluster(c, st)
	if err != nil {
		return nil, "", stackBody{}, err
	}
	if err := s.requireRouteRoleOn(c, model.ScopeCluster, clusterID); err != nil {
		return nil, "", stackBody{}, err
	}
	body, err := s.stackPackage(c, st, withSummary, allowEmpty)
	if err != nil {
		return nil, "", stackBody{}, err
	}
	return st, clusterID, body, nil
}

// applyStack validates the package, stores it as a snapshot and starts an
// apply of it: 202 with the execution, or with wait=true 200 with the
// finished execution and its report. With approve=required it starts a
// plan that awaits approval instead, answering 202 with it once planned.
func (s *server) applyStack(c echo.Context) error {
	wait, err := queryBool(c, "wait")
	if err != nil {
		return err
	}
	approval, err := approvalParam(c)
	if err != nil {
		return err
	}
	onFailure, parallelism, err := runOptions(c)
	if err != nil {
		return err
	}
	st, clusterID, body, err := s.stackRun(c, false, false)
	if err != nil {
		return err
	}
	if len(body.missingEnv) > 0 || len(body.missingSecrets) > 0 || len(body.missingVars) > 0 {
		return errMissingRefs(body.missingEnv, body.missingSecrets, body.missingVars)
	}
	if s.exec == nil {
		return errNoExecutions()
	}
	approval, err = s.stackApproval(c, st.ID, approval)
	if err != nil {
		return err
	}
	if len(body.given) > 0 {
		if approval != nil {
			// Kept for the stack only once the plan is approved.
			approval.KeepSecrets = true
		} else if err := s.keepStackSecrets(c.Request().Context(), st.ID, body.params.Secrets); err != nil {
			return err
		}
	}
	ref, err := s.storeParams(c.Request().Context(), body.params)
	if err != nil {
		return err
	}
	run := starter.StackRun{StackID: st.ID, SnapshotHash: body.hash, URLs: body.urls, ClusterID: clusterID,
		OnFailure: onFailure, Parallelism: parallelism, Params: ref}
	if approval != nil {
		run.Approval = approval
		ex, err := s.exec.StartDryRun(c.Request().Context(), run)
		if err != nil {
			return s.executionError(err, "")
		}
		return s.answerAwaiting(c, fromStarter(ex))
	}
	ex, err := s.exec.StartApply(c.Request().Context(), run)
	if err != nil {
		return s.executionError(err, "")
	}
	return s.answerStarted(c, fromStarter(ex), wait)
}

// dryRunStack plans the package against the stack and answers the plan
// (waiting for the dry-run execution, at most the wait timeout). Exec
// guard commands run only with ?guards=true.
func (s *server) dryRunStack(c echo.Context) error {
	_, parallelism, err := runOptions(c)
	if err != nil {
		return err
	}
	guards, err := queryBool(c, "guards")
	if err != nil {
		return err
	}
	st, clusterID, body, err := s.stackRun(c, true, true)
	if err != nil {
		return err
	}
	if s.exec == nil {
		return errNoExecutions()
	}
	ref, err := s.storeParams(c.Request().Context(), body.params)
	if err != nil {
		return err
	}
	ex, err := s.exec.StartDryRun(c.Request().Context(), starter.StackRun{StackID: st.ID, SnapshotHash: body.hash, URLs: body.urls, ClusterID: clusterID, Parallelism: parallelism,
		RunGuards: guards, Params: ref})
	if err != nil {
		return s.executionError(err, "")
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	awaited, finished, err := s.await(c, ex.ID)
	if err != nil {
		return err
	}
	done := s.present(fromStarter(awaited))
	if !finished || !done.Finished() {
		return c.JSON(http.StatusAccepted, done)
	}
	if done.Plan == nil {
		msg := "the dry-run did not produce a plan"
		if done.Error != "" {
			msg += ": " + done.Error
		}
		return &Error{Status: http.StatusUnprocessableEntity, Message: msg, Extra: map[string]any{"execution": done}}
	}
	res := model.DryRun{
		ExecutionID: done.ID, Summary: done.Plan.Summary, Diff: done.Plan.Steps,
		MissingEnvRefs: done.Plan.MissingEnvRefs, MissingSecrets: done.Plan.MissingSecrets,
	}
	if res.Diff == nil {
		res.Diff = []model.PlanStep{}
	}
	if res.MissingEnvRefs == nil {
		res.MissingEnvRefs = []string{}
	}
	if res.MissingSecrets == nil {
		res.MissingSecrets = []string{}
	}
	// The server's check sees every ref, those of steps the plan did
	// not resolve included.
	res.MissingEnvRefs = mergeSorted(res.MissingEnvRefs, body.missingEnv)
	res.MissingSecrets = mergeSorted(res.MissingSecrets, body.missingSecrets)
	res.MissingVars = nonNilStrings(body.missingVars)
	if awaited.DryRun != nil {
		res.Failures = awaited.DryRun.Failures
	}
	return c.JSON(http.StatusOK, res)
}

// deleteStack starts a destroy of the stack's resources that removes the
// record once it completes with nothing left (the workflow does, so it
// holds across restarts of this server). A destroy that fails keeps the
// record, listing what is left, so DELETE can be sent again.
func (s *server) deleteStack(c echo.Context) error {
	wait, err := queryBool(c, "wait")
	if err != nil {
		return err
	}
	st, err := s.stackOf(c)
	if err != nil {
		return err
	}
	if s.exec == nil {
		return errNoExecutions()
	}
	if err := s.refuseUnderFourEyes(c, st.ID); err != nil {
		return err
	}
	clusterID, err := s.stackCluster(c, st)
	if err != nil {
		return err
	}
	if err := s.requireRouteRoleOn(c, model.ScopeCluster, clusterID); err != nil {
		return err
	}
	started, err := s.exec.StartDestroy(c.Request().Context(), starter.StackRun{StackID: st.ID, ClusterID: clusterID, RemoveStack: true})
	if err != nil {
		return s.executionError(err, "")
	}
	ex := fromStarter(started)
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	if !wait {
		return c.JSON(http.StatusAccepted, s.present(ex))
	}
	awaited, finished, err := s.await(c, ex.ID)
	if err != nil {
		return err
	}
	done := s.present(fromStarter(awaited))
	if !finished || !done.Finished() {
		return c.JSON(http.StatusAccepted, done)
	}
	return c.JSON(http.StatusOK, done)
}
