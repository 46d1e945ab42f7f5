#!/usr/bin/env node
// Turns the results of a bash-compatibility corpus run into the generated parts of
// docs/bash-compatibility.md: the figures table and the list of every remaining difference.
//
// The results file is the JSON a corpus runner writes: a `summary` object and one row per case,
// each row holding the case's `id`, `script`, brush's `knownFailure` marker, whether bash's own
// output was reproducible (`bashDeterministic`), the three transcripts (`bash`, `ours` for
// `executeShell`, `baseline` for stock brush-core with no Shellwright hooks; each `{exit, out}`),
// the verdicts `verdict` (ours vs bash), `baselineVsBash`, `oursVsBaseline`
// (exact / msg-norm / msg-only / different) and the `attribution` of a difference:
// `wrapper` (stock brush-core matches bash better than we do: our embedding broke it),
// `brush` (we do what stock brush-core does) or `mixed` (both differ from bash, differently).
//
// Usage: node tools/bash-compat-doc.mjs RESULTS.json            print the generated Markdown
//        node tools/bash-compat-doc.mjs RESULTS.json --write DOC  replace the generated regions
// A generated region in DOC is delimited by `<!-- generated:NAME -->` and
// `<!-- /generated:NAME -->`; NAME is `figures` or `differences`. Everything else in DOC is kept.
import fs from 'node:fs';

const CLIP = 48; // characters of a transcript line quoted in a one-line description

const fmt = (n) => n.toLocaleString('en-US');
const clip = (s) => (s.length > CLIP ? `${s.slice(0, CLIP)}…` : s);
// Inside a Markdown table cell: no pipes, no backticks breaking the code span.
const code = (s) => (s === '' ? '(empty line)' : `\`${clip(s.replace(/(__shellwright_debug_trap) \d+/g, '$1 N')).replace(/`/g, "'").replace(/\|/g, '\\|')}\``);
const cell = (s) => s.replace(/\|/g, '\\|');

/** The runnable corpus cases whose bash output was reproducible. */
function comparable(rows) {
  return rows.filter((r) => String(r.group).startsWith('corpus') && r.bashDeterministic !== false && r.bash);
}

function figures(results) {
  const rows = comparable(results.cases);
  const marked = rows.filter((r) => r.knownFailure);
  const unmarked = rows.filter((r) => !r.knownFailure);
  const count = (rs, pred) => rs.filter(pred).length;
  const line = (label, pred) => `| ${label} | ${fmt(count(unmarked, pred))} | ${fmt(count(marked, pred))} |`;
  const s = results.summary;
  const symptoms = [
    ['runs that ignored their time limit', s.hangs.length],
    ['runs that killed or wedged the host process', s.workerDeaths.length],
    ['runs that changed the host process (umask, cwd, signals, rlimits, fds, environment)', s.hostStateChanged.length],
    ["runs that wrote to the host's stdout or stderr", s.leakedToHostStdio.length],
  ];
  return [
    `bash ${s.bash}; ${fmt(s.corpus.cases)} cases in ${s.corpus.yamlFiles} files; ${fmt(s.skipped.total)} not runnable here`
      + ' (brush-only, marked skip, or needing a terminal, interactive mode, other shell arguments or another bash version);'
      + ` ${fmt(s.corpus.runnable)} run, of which ${s.bashNondeterministic} left out because bash itself gave two different results.`,
    '',
    '| cases | not marked known failure by brush | marked known failure |',
    '|---|---:|---:|',
    line('compared', () => true),
    line('stock brush-core 0.5: exact match with bash', (r) => r.baselineVsBash === 'exact'),
    line('Shellwright (`executeShell`): exact match with bash', (r) => r.verdict === 'exact'),
    line('Shellwright: same except error-message wording', (r) => r.verdict === 'msg-norm' || r.verdict === 'msg-only'),
    line('Shellwright: different', (r) => r.verdict === 'different'),
    line('differences caused by the embedding (stock brush-core matches bash better)', (r) => r.verdict !== 'exact' && r.attribution === 'wrapper'),
    line("differences of brush-core's own (Shellwright does what stock brush-core does)", (r) => r.verdict !== 'exact' && r.attribution === 'brush'),
    line('both differ from bash, each in its own way', (r) => r.verdict !== 'exact' && r.attribution === 'mixed'),
    '',
    ...symptoms.map(([label, n]) => `- ${label}: ${n}`),
  ].join('\n');
}

/** What kind of thing a difference of ours is, recognised from the transcripts. */
function symptom(r) {
  if (r.ours.hang) return 'ignored its time limit';
  if (r.ours.workerDied) return 'killed or wedged the host process';
  if (r.hostStateChanged) return 'changed the host process';
  if (/__shellwright_debug_trap/.test(r.ours.out)) return 'the cancellation hook shows through';
  const bashLines = r.bash.out.split('\n'), ourLines = r.ours.out.split('\n');
  if (bashLines.length === ourLines.length && ourLines.some((l, i) => l !== bashLines[i])
    && ourLines.every((l, i) => l === bashLines[i] || l.replace('functrace:', '').replace(/(\w*)T(\w*)/, '$1$2') === bashLines[i])) return 'functrace shows as set';
  if (/functrace/.test(r.ours.out) && !/functrace/.test(r.bash.out) || /\$-/.test(r.script) && /set [+-]T/.test(r.script)) return 'functrace shows as set';
  if (/^error: shellwright: /m.test(r.ours.out) && /^error: -c: /m.test(r.baseline?.out ?? '')) return 'syntax errors name the script `shellwright`';
  if (/\bunset (PATH|OLDPWD|HOME)\b/.test(r.script)) return "variables from the run's `env`";
  if (/^signal /.test(String(r.bash.exit)) && typeof r.ours.exit === 'number' && r.ours.exit > 128) return 'a signal to `$$` ends the run, not a process';
  if (r.leakedToHostStdio) return "wrote to the host's stdio";
  if (/^\s*times\s*$/m.test(r.script)) return "`times` reports the host process's CPU times";
  if (r.bash.exit === r.ours.exit && [...bashLines].sort().join('\n') === [...ourLines].sort().join('\n')) return 'same lines in another order (timing)';
  return 'other';
}

/** One line saying how a case's transcript and status differ from `ref`'s (bash's unless given). */
function describe(r, ref = r.bash, refName = 'bash') {
  const parts = [];
  if (r.ours.hang) parts.push('never returns');
  else if (r.ours.workerDied) parts.push(`host process died (${r.ours.workerDied})`);
  if (ref.exit !== r.ours.exit && !r.ours.hang && !r.ours.workerDied) parts.push(`exit ${r.ours.exit} where ${refName} gives ${ref.exit}`);
  if (ref.out !== r.ours.out) {
    const a = ref.out.replace(/\n$/, '').split('\n'), b = r.ours.out.replace(/\n$/, '').split('\n');
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    if (i >= a.length) parts.push(`line ${i + 1}: extra ${code(b[i])}`);
    else if (i >= b.length) parts.push(`line ${i + 1}: missing ${code(a[i])}`);
    else parts.push(`line ${i + 1}: ${code(b[i])} where ${refName} has ${code(a[i])}`);
  }
  if (r.leakedToHostStdio) parts.push("part of the output went to the host's stdio");
  return parts.join('; ') || 'differs';
}

function differences(results) {
  const rows = comparable(results.cases).filter((r) => r.verdict !== 'exact');
  const out = [];
  const table = (rs, withSymptom, vsStock = false) => {
    const sorted = [...rs].sort((x, y) => (withSymptom ? symptom(x).localeCompare(symptom(y)) : 0) || x.id.localeCompare(y.id));
    out.push(withSymptom ? '| case | kind | difference |' : '| case | difference |', withSymptom ? '|---|---|---|' : '|---|---|');
    for (const r of sorted) {
      const id = `${cell(r.id)}${r.knownFailure ? ' (known failure)' : ''}`;
      out.push(withSymptom ? `| ${id} | ${symptom(r)} | ${vsStock ? describe(r, r.baseline, 'stock brush-core') : describe(r)} |` : `| ${id} | ${describe(r)} |`);
    }
    out.push('');
  };
  const wrapper = rows.filter((r) => r.attribution === 'wrapper');
  const mixed = rows.filter((r) => r.attribution === 'mixed');
  const brush = rows.filter((r) => r.attribution === 'brush');
  out.push(`### Caused by the embedding (${wrapper.length})`, '',
    'Stock brush-core matches bash here; Shellwright does not.', '');
  table(wrapper, true);
  out.push(`### Differing from bash in both, each in its own way (${mixed.length})`, '',
    'Stock brush-core already differs from bash; Shellwright differs from stock brush-core too. The difference',
    'shown is the one from stock brush-core, i.e. what the embedding adds.', '');
  table(mixed, true, true);
  const unmarked = brush.filter((r) => !r.knownFailure);
  out.push(`### brush-core's own (${brush.length}, of which ${unmarked.length} not marked as known failures by brush)`, '',
    'Shellwright does what stock brush-core does. The known failures brush lists itself are left out here.', '');
  table(unmarked, false);
  return out.join('\n').replace(/\n+$/, '');
}

function main() {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node tools/bash-compat-doc.mjs RESULTS.json [--write DOC]');
    process.exit(2);
  }
  const results = JSON.parse(fs.readFileSync(file, 'utf8'));
  const regions = { figures: figures(results), differences: differences(results) };
  const w = rest.indexOf('--write');
  if (w < 0) {
    console.log(Object.values(regions).join('\n\n'));
    return;
  }
  const doc = rest[w + 1];
  let text = fs.readFileSync(doc, 'utf8');
  for (const [name, body] of Object.entries(regions)) {
    const re = new RegExp(`(<!-- generated:${name} -->\n)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!re.test(text)) throw new Error(`${doc} has no region <!-- generated:${name} --> … <!-- /generated:${name} -->`);
    text = text.replace(re, (_, open, close) => `${open}${body}\n${close}`);
  }
  fs.writeFileSync(doc, text);
}

main();
