// MCP tasks (SEP-2663) with the official TypeScript SDK's tasks package
// (@modelcontextprotocol/ext-tasks, whose requester speaks the 2026-07-28 tasks extension) on
// the SDK v2 client, against a running archgate over streamable HTTP:
// - a call that waits for the person becomes a task; the package polls tasks/get at the interval
//   archgate suggests, for longer than any inline wait could last (ARCHGATE_TASK_WAIT_S, past
//   the 50 s default inline approval limit), until the person says yes (`archgate approve`);
//   the settled outcome is the tool's own result;
// - a cancel through the package withdraws the waiting question: it settles `cancelled`, the
//   question is gone from `archgate approvals`, and nothing ran.
// The package's V2 requester needs a host request path for task wire shapes (its README):
// `rawDispatch` below posts each JSON-RPC request as any stateless-era client would.
//
// Environment: ARCHGATE_URL, ARCHGATE_TOKEN, ARCHGATE_BIN (for `archgate approvals`/`approve`,
// with the same XDG directories), ARCHGATE_ASKED_TOOL (a tool that asks the person),
// ARCHGATE_TASK_WAIT_S (how long the person takes; default 55).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const url = process.env.ARCHGATE_URL;
const token = process.env.ARCHGATE_TOKEN;
const bin = process.env.ARCHGATE_BIN;
const askedTool = process.env.ARCHGATE_ASKED_TOOL;
const waitS = Number(process.env.ARCHGATE_TASK_WAIT_S ?? 55);
for (const [k, v] of Object.entries({ url, token, bin, askedTool })) assert.ok(v, `${k} is not set`);

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
    assert.ok(seen.filter((m) => m === 'tasks/get').length >= 2, `polls: ${seen.join(', ')}`);
    const record = JSON.parse(archgate('log', '--json', '--tool', askedTool).trim().split('\n').pop());
    assert.equal(record.id, q.id, JSON.stringify(record));
    assert.equal(record.outcome, 'ok');
    assert.equal(record.task, execution.handle.taskId);
    console.log(`# settled after ${took} ms, ${views} task views, ${seen.filter((m) => m === 'tasks/get').length} tasks/get`);
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
