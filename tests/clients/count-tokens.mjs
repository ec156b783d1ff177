// Counts tokens of the text on stdin with Claude's BPE tokenizer (@anthropic-ai/tokenizer, whose
// vocabulary ships inside the npm package: it counts offline). Prints the count alone.
// With --tools, stdin is a tools/list result ({"tools": [...]}) and each tool's count follows,
// largest first, one "name count" line each.
import { countTokens } from '@anthropic-ai/tokenizer';

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const text = Buffer.concat(chunks).toString('utf8');
console.log(countTokens(text));
if (process.argv.includes('--tools')) {
  const per = JSON.parse(text).tools.map((t) => [t.name, countTokens(JSON.stringify(t))]);
  per.sort((a, b) => b[1] - a[1]);
  for (const [name, n] of per) console.log(`${name} ${n}`);
}
