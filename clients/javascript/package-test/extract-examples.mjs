// Writes every code example of the JavaScript client's documentation (the "JavaScript and TypeScript" section of
// docs/CLIENTS.md, and clients/javascript/README.md) as a file of its language, for `tsc --strict` to check against the
// installed package's declarations (scripts/js-client-package-test). What an example leaves to the app (its
// `backend`, `screen`...) and the React Native modules it imports are declared in examples-prelude.d.ts.
// Usage: node extract-examples.mjs REPOSITORY OUT_FOLDER
import fs from 'node:fs';
import path from 'node:path';

const [repository, out] = process.argv.slice(2);
if (!repository || !out) throw new Error('usage: node extract-examples.mjs REPOSITORY OUT_FOLDER');

/// The text of `file` from the heading that starts with `start` to the next heading of the same or a higher level.
function section(file, start) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const first = lines.findIndex((line) => line.startsWith(start));
  if (first < 0) throw new Error(file + ' has no heading ' + start);
  const level = /^#+/.exec(start)[0].length;
  const next = lines.findIndex((line, index) => index > first && /^#+ /.test(line) && /^#+/.exec(line)[0].length <= level);
  return lines.slice(first, next < 0 ? lines.length : next).join('\n');
}

const sources = [
  ['docs/CLIENTS.md', section(path.join(repository, 'docs/CLIENTS.md'), '### JavaScript and TypeScript')],
  ['clients/javascript/README.md', fs.readFileSync(path.join(repository, 'clients/javascript/README.md'), 'utf8')],
];
fs.mkdirSync(out, { recursive: true });
let count = 0;
for (const [name, text] of sources) {
  for (const block of text.matchAll(/^```(js|ts|tsx)\n([\s\S]*?)^```$/gm)) {
    count += 1;
    // A JavaScript example is checked as JavaScript (checkJs), a TypeScript one as TypeScript.
    const file = path.join(out, 'example-' + count + (block[1] === 'js' ? '.js' : '.ts'));
    // Each example is a module of its own (its names do not meet the other examples').
    fs.writeFileSync(file, '// From ' + name + '.\n' + block[2] + (/^(import|export) /m.test(block[2]) ? '' : 'export {};\n'));
    console.log(file + ' (' + name + ', ' + block[2].split('\n').length + ' lines)');
  }
}
if (count === 0) throw new Error('no examples found');
