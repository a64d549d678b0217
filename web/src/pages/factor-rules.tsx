// Factor rules on the settings page (docs/scoring.md, "Factors from metrics"; docs/api.md, "Factor
// rules"): the rules listed in words, and an editor that draws the scale's curve as it is typed,
// asks the server what saving would change (the preview route), and shows each refusal next to
// the field the API names in `param`. The form checks only that its numbers are numbers; what a
// rule may be is the server's to say, so its messages are the ones shown.
//
// This file holds the rules' list; the editor is factor-rules-form.tsx (its draft and how it is
// read: factor-rules-draft.ts; its parts: factor-rules-fields.tsx and factor-rules-scale.tsx).
import { useRef, useState } from 'preact/hooks';
import { api, can, type FactorRule, factorRulePath, type MetricName, type Summary } from '../api.ts';
import { aggregateWords, gateWords, maxAgeWords, scaleWords } from '../rules.ts';
import { ErrorMessage, Loading, Notice, useLoad } from '../ui.tsx';
import { RuleForm, useRuleEditor } from './factor-rules-form.tsx';

export function FactorRules() {
  const admin = can('administer');
  const loaded = useLoad(async (signal) => {
    const [rules, summary, names] = await Promise.all([
      api.get<{ data: FactorRule[] }>('/api/settings/health-score/factors', signal),
      api.get<Summary>('/api/health-scores/summary', signal),
      // The names a rule can read: offered as the metric is typed, and a name not among them is
      // called out (a misspelt metric previews "0 changed" and saves a rule that never scores).
      api.get<{ data: MetricName[] }>('/api/metrics/names', signal),
    ]);
    return { rules: rules.data, summary, names: names.data.map((n) => n.name) };
  }, []);
  const [notice, setNotice] = useState<string>();
  const [listError, setListError] = useState<unknown>();
  const editor = useRuleEditor(() => setNotice(undefined));
  const heading = useRef<HTMLHeadingElement>(null);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data) return <Loading what="the factor rules" />;
  const { rules, summary, names } = loaded.data;

  const edit = (rule: FactorRule) => {
    editor.edit(rule);
    setNotice(undefined);
    heading.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus();
  };
  const saved = (rule: FactorRule, after: Summary, message: string) => {
    loaded.set({
      rules: [...rules.filter((r) => r.factor !== rule.factor), rule].sort((a, b) =>
        a.factor < b.factor ? -1 : 1,
      ),
      summary: after,
      names,
    });
    editor.startOver();
    setNotice(message);
  };

  const remove = async (rule: FactorRule) => {
    if (
      !confirm(
        `Delete the rule of ${rule.factor}? The factor leaves every score that has it, and those scores are recomputed.`,
      )
    )
      return;
    setListError(undefined);
    try {
      await api.delete(factorRulePath(rule.factor));
      const after = await api.get<Summary>('/api/health-scores/summary').catch(() => summary);
      loaded.set({ rules: rules.filter((r) => r.factor !== rule.factor), summary: after, names });
      if (editor.editing === rule.factor) editor.startOver();
      setNotice(`The rule of ${rule.factor} is deleted; ${rule.factor} has left every score.`);
    } catch (err) {
      setListError(err);
    }
  };

  return (
    <section aria-labelledby="rules-title" class="card">
      <h2 id="rules-title">Factor rules</h2>
      <p class="hint">
        A rule derives a factor from a metric the API records for each customer: an aggregate of its points
        over a window, put on a scale from 0 to 1. A derived factor can no longer be posted. Saving or
        deleting a rule recomputes every score it moves at once.
      </p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorMessage error={listError} title="Not deleted:" />
      {rules.length === 0 ? (
        <p>No factor rules yet: every factor is posted.</p>
      ) : (
        <RulesTable rules={rules} admin={admin} onEdit={edit} onRemove={remove} />
      )}
      {!admin ? (
        <p class="hint">Changing factor rules takes an admin.</p>
      ) : (
        <RuleForm
          editor={editor}
          rules={rules}
          summary={summary}
          names={names}
          heading={heading}
          onSaved={saved}
        />
      )}
    </section>
  );
}

function RulesTable(props: {
  rules: FactorRule[];
  admin: boolean;
  onEdit: (rule: FactorRule) => void;
  onRemove: (rule: FactorRule) => void;
}) {
  const { rules, admin } = props;
  return (
    <div class="table-wrap">
      <table class="rules">
        <caption class="sr-only">Factor rules</caption>
        <thead>
          <tr>
            <th scope="col">Factor</th>
            <th scope="col">Metric</th>
            <th scope="col">Reads</th>
            <th scope="col">Scale</th>
            <th scope="col">Max age</th>
            <th scope="col">Gate</th>
            {admin && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rules.map((r) => (
            <tr key={r.factor} data-factor={r.factor}>
              <th scope="row" class="mono">
                {r.factor}
              </th>
              <td data-label="Metric">
                <span class="mono">{r.metric}</span>
              </td>
              <td data-label="Reads">{aggregateWords(r)}</td>
              <td data-label="Scale">{scaleWords(r.scale)}</td>
              <td data-label="Max age">{maxAgeWords(r.max_age_days)}</td>
              <td data-label="Gate">{gateWords(r.gate)}</td>
              {admin && (
                <td class="row-actions">
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => props.onEdit(r)}
                    aria-label={`Edit the rule of ${r.factor}`}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    class="danger small"
                    onClick={() => props.onRemove(r)}
                    aria-label={`Delete the rule of ${r.factor}`}
                  >
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
