package trace

import (
	"time"
)

// Derive recomputes every derived field of r from its raw ones: status, latency, parent_run_ids
// (from the dotted_order), first_token_time, provider and model, and for llm runs the normalised
// input and output messages with their problems, the token counts and the costs (explicit costs
// of the usage winning over prices; prices may be nil). Other run types have no tokens of their
// own: RollUp gives them their descendants'.
func Derive(r *Run, prices *Prices) { derive(r, prices, true) }

// DerivedInputKeys are the keys of a run's inputs DeriveStored reads (ModelOf's): inputs that
// hold only these of their keys derive the same. Derive's messages read them all.
var DerivedInputKeys = []string{"model", "model_name"}

// DeriveStored is Derive without the normalised messages and their problems, which stay nil:
// they are derived from the inputs and outputs alone, so storage leaves them out and readers
// call Derive again.
func DeriveStored(r *Run, prices *Prices) { derive(r, prices, false) }

func derive(r *Run, prices *Prices, messages bool) {
	switch {
	case r.Error != nil && *r.Error != "":
		r.Status = StatusError
	case r.EndTime == nil:
		r.Status = StatusPending
	default:
		r.Status = StatusSuccess
	}
	r.Latency = nil
	if r.EndTime != nil && !r.StartTime.IsZero() {
		r.Latency = ptr(r.EndTime.Sub(r.StartTime).Seconds())
	}
	r.ParentRunIDs = ancestorsOf(r)
	r.FirstTokenTime = FirstTokenTime(r)
	r.Provider, r.ModelName = ModelOf(r)

	r.PromptTokens, r.CompletionTokens, r.TotalTokens = 0, 0, 0
	r.PromptCost, r.CompletionCost, r.TotalCost = nil, nil, nil
	r.PromptTokenDetails, r.CompletionTokenDetails = nil, nil
	r.InputMessages, r.OutputMessages, r.MessageProblems = nil, nil, nil
	if r.RunType != RunLLM {
		return
	}
	if messages {
		deriveMessages(r)
	}
	if u, ok := UsageOf(r); ok {
		r.PromptTokens, r.CompletionTokens, r.TotalTokens = u.Input, u.Output, u.Total
		r.PromptTokenDetails, r.CompletionTokenDetails = u.InputDetails, u.OutputDetails
		r.PromptCost, r.CompletionCost, r.TotalCost = prices.Cost(r.Provider, r.ModelName, u)
	}
}

// deriveMessages normalises an llm run's inputs and outputs to messages and lists their problems.
func deriveMessages(r *Run) {
	known := map[string]bool{}
	if msgs, ok := normalize(r.Inputs); ok {
		checkMessages(msgs, known)
		r.InputMessages = msgs
		for _, p := range Problems(msgs) {
			r.MessageProblems = append(r.MessageProblems, "inputs: "+p)
		}
	}
	if msgs, ok := normalize(r.Outputs); ok {
		checkMessages(msgs, known)
		r.OutputMessages = msgs
		for _, p := range Problems(msgs) {
			r.MessageProblems = append(r.MessageProblems, "outputs: "+p)
		}
	}
}

// ModelOf names the model of a run and its provider. The model is the first of
// extra.metadata.svc_model_name, extra.metadata.ls_model_name, inputs.model, inputs.model_name,
// extra.invocation_params.model, extra.invocation_params.model_name, outputs.model (what
// chat-completions responses carry) and outputs.llm_output.model_name; the provider is
// extra.metadata.svc_provider or ls_provider.
func ModelOf(r *Run) (provider, model string) {
	md := r.Metadata()
	model = firstStr(md["svc_model_name"], md["ls_model_name"], r.Inputs["model"], r.Inputs["model_name"],
		path(r.Extra, "invocation_params", "model"), path(r.Extra, "invocation_params", "model_name"),
		r.Outputs["model"], path(r.Outputs, "llm_output", "model_name"))
	provider = firstStr(md["svc_provider"], md["ls_provider"])
	return provider, model
}

// FirstTokenTime returns the time of the run's earliest new_token event (its time an ISO string
// or epoch milliseconds), or nil.
func FirstTokenTime(r *Run) *time.Time {
	var first *time.Time
	for _, e := range r.Events {
		if e["name"] != "new_token" {
			continue
		}
		t, err := ParseTime(e["time"])
		if err != nil {
			continue
		}
		if first == nil || t.Before(*first) {
			first = &t
		}
	}
	return first
}

// RollUp gives every run of runs that is not an llm run the totals of the llm runs among its
// descendants in runs (found by dotted_order, or parent_run_id): tokens, token details and costs (a cost is nil when no descendant has
// one). It is what the langsmith read model shows for chains and roots; call it on whole traces
// after Derive.
func RollUp(runs []*Run) {
	byID := make(map[string]*Run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
		if r.RunType != RunLLM {
			r.PromptTokens, r.CompletionTokens, r.TotalTokens = 0, 0, 0
			r.PromptCost, r.CompletionCost, r.TotalCost = nil, nil, nil
			r.PromptTokenDetails, r.CompletionTokenDetails = nil, nil
		}
	}
	for _, l := range runs {
		if l.RunType != RunLLM {
			continue
		}
		for _, id := range lineage(l, byID) {
			a, ok := byID[id]
			if !ok || a.RunType == RunLLM {
				continue
			}
			a.PromptTokens += l.PromptTokens
			a.CompletionTokens += l.CompletionTokens
			a.TotalTokens += l.TotalTokens
			a.PromptCost = sumCost(a.PromptCost, l.PromptCost)
			a.CompletionCost = sumCost(a.CompletionCost, l.CompletionCost)
			a.TotalCost = sumCost(a.TotalCost, l.TotalCost)
			for k, n := range l.PromptTokenDetails {
				a.PromptTokenDetails = addDetail(a.PromptTokenDetails, k, n)
			}
			for k, n := range l.CompletionTokenDetails {
				a.CompletionTokenDetails = addDetail(a.CompletionTokenDetails, k, n)
			}
		}
	}
}

// lineage returns the ancestors of r: from its dotted_order, else by following parent_run_id
// through byID.
func lineage(r *Run, byID map[string]*Run) []string {
	if r.DottedOrder != "" {
		return ancestorsOf(r)
	}
	var ids []string
	seen := map[string]bool{r.ID: true}
	for r.ParentRunID != nil && !seen[*r.ParentRunID] {
		id := *r.ParentRunID
		seen[id] = true
		ids = append(ids, id)
		if r = byID[id]; r == nil {
			break
		}
	}
	return ids
}

// sumCost adds b to a, a nil one counting as nothing; nil when both are.
func sumCost(a, b *float64) *float64 {
	switch {
	case b == nil:
		return a
	case a == nil:
		return ptr(*b)
	}
	return ptr(round(*a + *b))
}
