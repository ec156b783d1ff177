// MCP tasks (SEP-2663) with the official TypeScript SDK's tasks package
// (@modelcontextprotocol/ext-tasks, whose requester speaks the 2026-07-28 tasks extension) on
// the SDK v2 client, against a running archgate over streamable HTTP:
// - a call that waits for the person becomes a task; the package polls tasks/get at the interval
//   archgate suggests, for minutes (ARCHGATE_TASK_WAIT_S, default 130 s: past the 50 s default
//   inline approval limit and past the 60 s common clients give a request, and past two
//   minutes), until the person says yes (`archgate approve`); the question's deadline is the
//   task's (ARCHGATE_TASK_TIMEOUT_S, above the wait), the client polled no faster than the hint
//   and kept polling all along; the settled outcome is the tool's own result;
// - a cancel through the package withdraws the waiting question: it settles `cancelled`, the
//   question is gone from `archgate approvals`, and nothing ran.
// The package's V2 requester needs a host request path for task wire shapes (its README):
// `rawDispatch` below posts each JSON-RPC request as any stateless-era client would.
//
// Environment: ARCHGATE_URL, ARCHGATE_TOKEN, ARCHGATE_BIN (for `archgate approvals`/`approve`,
// with the same XDG directories), ARCHGATE_ASKED_TOOL (a tool that asks the person),
// ARCHGATE_TASK_WAIT_S (how long the person takes; default 130), ARCHGATE_TASK_TIMEOUT_S (the
// daemon's approval.task_timeout_s).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const url = process.env.ARCHGATE_URL;
const token = process.env.ARCHGATE_TOKEN;
const bin = process.env.ARCHGATE_BIN;
const askedTool = process.env.ARCHGATE_ASKED_TOOL;
const waitS = Number(process.env.ARCHGATE_TASK_WAIT_S ?? 130);
const taskTimeoutS = Number(process.env.ARCHGATE_TASK_TIMEOUT_S);
for (const [k, v] of Object.entries({ url, token, bin, askedTool, taskTimeoutS })) assert.ok(v, `${k} is not set`);
assert.ok(taskTimeoutS > waitS, `the task's deadline (${taskTimeoutS} s) must outlast the wait (${waitS} s)`);

const PROTOCOL = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const clientInfo = { name: 'archgate-ts-tasks', version: '0.0.0' };

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok - ${name}\n  ${String(e && e.stack ? e.stack : e).replace(/\n/g, '\n  ')}`);
  }
}

const archgate = (...args) => execFileSync(bin, args, { encoding: 'utf8' });
const pending = () => JSON.parse(archgate('approvals', '--json'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function onePending() {
  for (let i = 0; i < 200; i += 1) {
    const p = pending();
    if (p.length === 1) return p[0];
    await sleep(100);
  }
  throw new Error(`expected one pending question, saw ${JSON.stringify(pending())}`);
}

// The host request path: one stateless-era POST per JSON-RPC request (the package framed its
// _meta already), with SEP-2243's routing headers; the answer may come as JSON or as SSE.
let nextId = 1;
const seen = [];
async function rawDispatch(request, options = {}) {
  const body = { jsonrpc: '2.0', id: nextId++, ...request };
  const params = body.params ?? {};
  const name = body.method === 'tools/call' ? params.name : params.taskId;
  seen.push(body.method);
  const res = await fetch(url, {
    method: 'POST',
    signal: options.signal,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': PROTOCOL,
      'Mcp-Method': body.method,
      ...(name === undefined ? {} : { 'Mcp-Name': name }),
      ...(options.context?.headers ?? {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim())
      .filter((l) => l.length > 0).map((l) => JSON.parse(l))
    : [JSON.parse(text)];
  const answer = messages.find((m) => m.id === body.id);
  assert.ok(answer, `no answer to ${body.method} in HTTP ${res.status}: ${text}`);
  return answer.error ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result };
}

async function tasksSession(fn) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    authProvider: { token: async () => token },
  });
  const client = new Client(clientInfo, { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  const session = createTaskSessionFromClient(client, {
    endpointId: 'archgate-under-test',
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: PROTOCOL,
      clientInfo,
      clientCapabilities: { extensions: { [TASKS]: {} } },
    },
  });
  try {
    await fn(session);
  } finally {
    await session.close?.();
    await client.close();
  }
}

await check(`a call waiting ${waitS} s for the person is a task, polled until the yes, then its result`, () =>
  tasksSession(async (session) => {
    const started = Date.now();
    const execution = await session.callTool(askedTool, {});
    assert.equal(execution.kind, 'task', `not a task: ${execution.kind}`);
    const q = await onePending();
    assert.equal(q.tool, askedTool);
    // The question waits the task's deadline (approval.task_timeout_s), not the inline one.
    assert.equal(q.deadline - q.created, taskTimeoutS, JSON.stringify(q));
    const pollsBefore = seen.filter((m) => m === 'tasks/get').length;
    let views = 0;
    let lastView;
    const settled = execution.settle({
      onEvent: (e) => {
        if (e.type === 'task') {
          views += 1;
          lastView = e.task;
        }
      },
    });
    // The person takes their time: longer than any inline wait would be held.
    await sleep(waitS * 1000);
    assert.equal(pending().length, 1, 'the question did not wait');
    archgate('approve', q.id);
    const { outcome } = await settled;
    const took = Date.now() - started;
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.notEqual(outcome.result.isError, true, JSON.stringify(outcome.result));
    assert.ok(outcome.result.content?.length > 0, JSON.stringify(outcome.result));
    assert.ok(took >= waitS * 1000, `settled after ${took} ms`);
    assert.ok(views >= 2, `${views} task views while waiting`);
    assert.equal(lastView?.suggestedPollIntervalMs, 2000, JSON.stringify(lastView));
    // The task is kept at least as long as its question may wait.
    assert.ok(lastView.retentionMs >= taskTimeoutS * 1000, JSON.stringify(lastView));
    // The package polled all along, never faster than the 2 s hint: about one poll per 2 s of
    // the wait (fewer on a loaded machine, never more).
    const polls = seen.filter((m) => m === 'tasks/get').length - pollsBefore;
    assert.ok(polls >= 2, `polls: ${seen.join(', ')}`);
    assert.ok(polls <= Math.ceil(took / 2000) + 2, `${polls} polls in ${took} ms: faster than the 2 s hint`);
    const record = JSON.parse(archgate('log', '--json', '--tool', askedTool).trim().split('\n').pop());
    assert.equal(record.id, q.id, JSON.stringify(record));
    assert.equal(record.outcome, 'ok');
    assert.equal(record.task, execution.handle.taskId);
    console.log(`# settled after ${took} ms (the person answered after ${waitS} s; deadline ${taskTimeoutS} s), ${views} task views, ${polls} tasks/get (hint 2000 ms)`);
  }));

await check('a cancel withdraws the waiting question, and nothing runs', () =>
  tasksSession(async (session) => {
    const execution = await session.callTool(askedTool, {});
    assert.equal(execution.kind, 'task');
    const q = await onePending();
    const settled = execution.settle();
    await execution.cancel();
    const { outcome } = await settled;
    assert.equal(outcome.status, 'cancelled', JSON.stringify(outcome));
    assert.deepEqual(pending(), []);
    // A late yes finds nothing to run.
    assert.throws(() => archgate('approve', q.id));
    const record = JSON.parse(archgate('log', '--json', '--tool', askedTool).trim().split('\n').pop());
    assert.equal(record.id, q.id, JSON.stringify(record));
    assert.equal(record.outcome, 'cancelled');
    assert.equal(record.approval?.channel, 'tasks/cancel');
  }));

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
