// Judges one run of the MCP conformance suite against archgate's expected failures.
//
//   node judge.mjs EXPECTED_FAILURES_YAML REQUIREMENTS_DIR REVISION=RESULTS_DIR...
//
// Every server scenario a revision runs (its required list and its not-scored list, as the suite's
// own requirements/<revision>.yaml names them) must have results, and a scenario passes when none
// of its checks is a FAILURE. A failing scenario must be listed for that revision in the expected
// failures file, with a reason; a listed scenario that passes (or is not run) is a stale entry.
// Either mistake fails the run. Prints one table row per scenario. Exit status 0 when all is as
// expected, 1 otherwise.

import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

// These guard archgate's own safety promises; no entry may excuse them.
const MUST_PASS = ['dns-rebinding-protection', 'server-stateless'];

const [expectedFile, requirementsDir, ...runs] = process.argv.slice(2);
const problems = [];

const expected = YAML.parse(fs.readFileSync(expectedFile, 'utf8')) ?? {};
const revisions = runs.map((r) => {
  const i = r.indexOf('=');
  return { revision: r.slice(0, i), dir: r.slice(i + 1) };
});

/** Scenario name → verdict for one results directory. */
function readResults(dir) {
  const out = new Map();
  for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    if (!m) continue;
    let checks;
    try {
      checks = JSON.parse(fs.readFileSync(path.join(dir, entry, 'checks.json'), 'utf8'));
    } catch (e) {
      out.set(m[1], { pass: false, failed: [`unreadable results: ${e.message}`], warnings: 0 });
      continue;
    }
    const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => c.id);
    const warnings = checks.filter((c) => c.status === 'WARNING').length;
    out.set(m[1], { pass: failed.length === 0, failed, warnings });
  }
  return out;
}

/** The server scenarios a revision runs, and whether each is scored. */
function scenariosOf(revision) {
  const req = YAML.parse(fs.readFileSync(path.join(requirementsDir, `${revision}.yaml`), 'utf8'));
  const list = new Map((req.server ?? []).map((s) => [s, 'required']));
  for (const n of req.not_scored ?? []) {
    if (n.leg === 'server') list.set(n.scenario, `not scored: ${n.reason}`);
  }
  return list;
}

const rows = new Map(); // scenario → { revision → cell }
let unexpected = 0;
let excused = 0;
let passed = 0;
for (const { revision, dir } of revisions) {
  const results = readResults(dir);
  const scenarios = scenariosOf(revision);
  const entries = expected[revision] ?? [];
  if (!Array.isArray(entries)) {
    problems.push(`${expectedFile}: "${revision}" must be a list`);
    continue;
  }
  const listed = new Map();
  for (const e of entries) {
    if (!e || typeof e.scenario !== 'string' || typeof e.reason !== 'string' || !e.reason.trim()) {
      problems.push(`${expectedFile}: every ${revision} entry needs a scenario and a reason: ${JSON.stringify(e)}`);
      continue;
    }
    if (MUST_PASS.includes(e.scenario)) {
      problems.push(`${expectedFile}: ${e.scenario} must pass; it cannot be an expected failure`);
    }
    if (!scenarios.has(e.scenario)) {
      problems.push(`${expectedFile}: ${e.scenario} is not run at ${revision} (stale entry)`);
    }
    listed.set(e.scenario, e.reason);
  }
  for (const [scenario, scoring] of scenarios) {
    const r = results.get(scenario) ?? { pass: false, failed: ['no results: the scenario did not run'], warnings: 0 };
    let cell;
    if (r.pass && listed.has(scenario)) {
      cell = 'STALE';
      problems.push(`${scenario} passes at ${revision} but is listed as an expected failure: remove the entry`);
    } else if (r.pass) {
      cell = r.warnings ? `pass (${r.warnings} warning${r.warnings > 1 ? 's' : ''})` : 'pass';
      passed++;
    } else if (listed.has(scenario)) {
      cell = 'expected failure';
      excused++;
    } else {
      cell = 'FAIL';
      unexpected++;
      problems.push(`${scenario} fails at ${revision} (${scoring}): ${r.failed.join(', ')}`);
    }
    if (!rows.has(scenario)) rows.set(scenario, {});
    rows.get(scenario)[revision] = scoring === 'required' ? cell : `${cell} [${scoring}]`;
  }
}

const header = ['scenario', ...revisions.map((r) => r.revision)];
const table = [header, ...[...rows].map(([s, cells]) => [s, ...revisions.map((r) => cells[r.revision] ?? '—')])];
const widths = header.map((_, i) => Math.max(...table.map((row) => row[i].length)));
for (const [i, row] of table.entries()) {
  console.log(row.map((c, j) => c.padEnd(widths[j])).join('  ').trimEnd());
  if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}
console.log(`\n${passed} passed, ${excused} expected failures, ${unexpected} unexpected failures`);
if (problems.length) {
  console.log('\nProblems:');
  for (const p of problems) console.log(`  - ${p}`);
  process.exit(1);
}
