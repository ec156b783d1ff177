// The official TypeScript SDK v2 client (@modelcontextprotocol/client) against a running
// archgate over streamable HTTP, in both of the SDK's version-negotiation modes ('legacy':
// the initialize handshake; 'auto': probe server/discover, fall back to initialize).
// Connects with the bearer token, lists tools, calls system_status and checks its answer
// against what Node itself reads from this machine. Exits non-zero on the first failure.
//
// Environment: ARCHGATE_URL (http://127.0.0.1:PORT/mcp), ARCHGATE_TOKEN.
import assert from 'node:assert/strict';
import os from 'node:os';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { countTokens } from '@anthropic-ai/tokenizer';

const url = process.env.ARCHGATE_URL;
const token = process.env.ARCHGATE_TOKEN;
assert.ok(url, 'ARCHGATE_URL is not set');
assert.ok(token, 'ARCHGATE_TOKEN is not set');

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

async function session(mode, fn) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    authProvider: { token: async () => token },
  });
  const client = new Client(
    { name: 'archgate-ts-check', version: '0.0.0' },
    { versionNegotiation: { mode } },
  );
  await client.connect(transport);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

for (const mode of ['legacy', 'auto']) {
  await check(`${mode}: initialize, list tools, call system_status`, () =>
    session(mode, async (client) => {
      const info = client.getServerVersion();
      assert.equal(info?.name, 'archgate', `serverInfo: ${JSON.stringify(info)}`);
      assert.match(info?.version ?? '', /^\d+\.\d+\.\d+/);
      const version = client.getNegotiatedProtocolVersion();
      assert.ok(version, 'no protocol version was negotiated');
      console.log(`# ${mode}: negotiated ${version}`);
      if (mode === 'legacy') {
        assert.ok(version < '2026-07-28', `legacy mode negotiated ${version}`);
      } else {
        // archgate speaks the stateless era: the probe must land there, not fall back.
        assert.ok(version >= '2026-07-28', `auto mode fell back to ${version}`);
      }

      const { tools } = await client.listTools();
      const status = tools.find((t) => t.name === 'system_status');
      assert.ok(status, `system_status missing from ${tools.map((t) => t.name).join(', ')}`);
      assert.equal(status.annotations?.readOnlyHint, true);
      assert.notEqual(status.annotations?.destructiveHint, true);
      assert.equal(status.inputSchema.type, 'object');

      const result = await client.callTool({ name: 'system_status', arguments: {} });
      assert.notEqual(result.isError, true, JSON.stringify(result));
      const s = result.structuredContent;
      assert.ok(s, `no structured content: ${JSON.stringify(result)}`);
      assert.equal(s.cpus, os.cpus().length);
      assert.equal(s.kernel.release, os.release());
      assert.equal(s.hostname, os.hostname());
      assert.ok(s.memory.total_bytes > 0);
      assert.ok(Math.abs(s.memory.total_bytes - os.totalmem()) < 1024 * 1024 * 16,
        `memory ${s.memory.total_bytes} vs ${os.totalmem()}`);
      const text = result.content.find((c) => c.type === 'text');
      assert.ok(text, 'no text content');
      assert.deepEqual(JSON.parse(text.text).cpus, s.cpus);

      const bad = await client.callTool({ name: 'system_status', arguments: { nope: 1 } });
      assert.equal(bad.isError, true, `unknown argument accepted: ${JSON.stringify(bad)}`);
    }));
}

// The context budget (issue 21): the tool list the `full` preset's client receives (the token
// here is `local`'s, given `preset = "full"` by run-ts-client.sh) costs at most 6,000 tokens of
// Claude's own BPE tokenizer, counted on the JSON as the SDK received it.
const BUDGET = 6000;
await check(`the full preset's tools/list fits ${BUDGET} tokens`, () =>
  session('legacy', async (client) => {
    const { tools } = await client.listTools();
    assert.ok(tools.length >= 30, `only ${tools.length} tools: is this the full preset?`);
    const n = countTokens(JSON.stringify({ tools }));
    const biggest = tools
      .map((t) => [t.name, countTokens(JSON.stringify(t))])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([name, k]) => `${name} ${k}`)
      .join(', ');
    console.log(`# tools/list: ${tools.length} tools, ${n} tokens (largest: ${biggest})`);
    assert.ok(n <= BUDGET, `${n} tokens > ${BUDGET}; largest: ${biggest}`);
  }));

// An approval that waits longer than the client's own request timeout: archgate sends progress
// every 5 s while the call waits (the request carries a progressToken because onprogress is
// set), the SDK resets its timeout on each, and the agent hears archgate's own answer when the
// person stays silent ("declined"/timed out), not the SDK's -32001. The control: the same wait
// without resets ends in -32001, so the first check could fail.
const askedTool = process.env.ARCHGATE_ASKED_TOOL;
const approvalS = Number(process.env.ARCHGATE_APPROVAL_TIMEOUT_S);
if (askedTool && approvalS) {
  const clientTimeoutMs = 7000;
  await check('an approval wait past the request timeout ends in archgate\'s answer, kept alive by progress', () =>
    session('legacy', async (client) => {
      let progress = 0;
      const started = Date.now();
      const result = await client.callTool({ name: askedTool, arguments: {} }, {
        timeout: clientTimeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: () => { progress += 1; },
      });
      const took = Date.now() - started;
      assert.equal(result.isError, true, JSON.stringify(result));
      const text = result.content.find((c) => c.type === 'text')?.text ?? '';
      assert.match(text, /^(declined|timed_out|timed out)/, text);
      assert.ok(took > clientTimeoutMs, `answered after ${took} ms, inside the client's timeout: not a test of it`);
      assert.ok(took >= approvalS * 1000 - 500, `answered after ${took} ms, before approval.timeout_s`);
      assert.ok(progress >= 2, `${progress} progress notifications in ${took} ms`);
      console.log(`# answered after ${took} ms with ${progress} progress notifications: ${text.split('\n')[0]}`);
    }));
  await check('the control: without progress resets the same wait ends in the client\'s -32001', () =>
    session('legacy', async (client) => {
      await assert.rejects(
        client.callTool({ name: askedTool, arguments: {} }, { timeout: clientTimeoutMs }),
        (e) => e?.code === -32001 || /timed out/i.test(String(e?.message)),
      );
    }));
}

await check('a wrong token is refused', async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    authProvider: { token: async () => 'not-the-token' },
  });
  const client = new Client({ name: 'archgate-ts-check', version: '0.0.0' });
  await assert.rejects(client.connect(transport));
  await client.close().catch(() => {});
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
