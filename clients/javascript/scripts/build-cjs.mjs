// Writes the CommonJS build of the package from its one source, the ES module location-broker-client.js, for
// `require()` and for TypeScript projects compiled as CommonJS: location-broker-client.cjs (the module's text with
// its `export` keywords taken off and `module.exports` at the end) and location-broker-client.d.cts (the
// declarations, which TypeScript reads as CommonJS under that name). `npm pack` runs it (prepack); the files it
// writes are not kept in git. It refuses any module syntax it does not convert, rather than write a wrong build,
// and checks that the build exports the same names, with the same values where they are data, as the source.
//
// Usage: node scripts/build-cjs.mjs [--source FILE] [--out FOLDER]   (defaults: the package's file, its folder)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const packageFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const options = { source: path.join(packageFolder, 'location-broker-client.js'), out: packageFolder };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  const name = args[i].replace(/^--/, '');
  if (!(name in options) || args[i + 1] === undefined) fail('usage: node scripts/build-cjs.mjs [--source FILE] [--out FOLDER]');
  options[name] = path.resolve(args[i + 1]);
}

function fail(message) {
  console.error('build-cjs: ' + message);
  process.exit(1);
}

/// The CommonJS text of an ES module whose only module syntax is `export` before top-level declarations.
function commonJS(text, sourceName) {
  const names = [];
  const lines = text.split('\n').map((line, index) => {
    const declaration = /^export (const|let|function|async function|class) ([A-Za-z_$][\w$]*)/.exec(line);
    if (declaration) {
      names.push(declaration[2]);
      return line.slice('export '.length);
    }
    if (/^\s*(export|import)\b/.test(line) || /\bimport\s*\.\s*meta\b|\bimport\s*\(/.test(line)) {
      fail(sourceName + ':' + (index + 1) + ': module syntax this build does not convert: ' + line.trim());
    }
    return line;
  });
  if (names.length === 0) fail(sourceName + ': exports nothing');
  return "'use strict';\n" +
    '// Generated from ' + sourceName + ' by scripts/build-cjs.mjs (npm pack runs it): edit the ES module, not this.\n' +
    lines.join('\n').replace(/\n*$/, '\n') +
    '\nmodule.exports = { ' + names.join(', ') + ' };\n';
}

const sourceName = path.basename(options.source);
const base = sourceName.replace(/\.js$/, '');
const cjsFile = path.join(options.out, base + '.cjs');
const declarations = path.join(path.dirname(options.source), base + '.d.ts');
fs.mkdirSync(options.out, { recursive: true });
fs.writeFileSync(cjsFile, commonJS(fs.readFileSync(options.source, 'utf8'), sourceName));
if (fs.existsSync(declarations)) {
  fs.writeFileSync(path.join(options.out, base + '.d.cts'),
    '// Generated from ' + base + '.d.ts by scripts/build-cjs.mjs: the declarations of ' + base + '.cjs.\n' +
    fs.readFileSync(declarations, 'utf8'));
}

// The build's exports are the module's: the same names, the same data (classes and functions by kind).
const esm = await import(pathToFileURL(options.source).href);
const cjs = createRequire(import.meta.url)(cjsFile);
const expected = Object.keys(esm).sort();
if (!isDeepStrictEqual(Object.keys(cjs).sort(), expected)) {
  fail('the CommonJS build exports ' + Object.keys(cjs).sort().join(', ') + ', the module ' + expected.join(', '));
}
/// A value with its functions replaced by their kind and name: what two separately loaded copies share.
function shape(value) {
  if (typeof value === 'function') return 'function ' + value.name;
  if (value === null || typeof value !== 'object') return value;
  const shaped = {};
  for (const key of Object.keys(value)) shaped[key] = shape(value[key]);
  return shaped;
}
for (const name of expected) {
  if (!isDeepStrictEqual(shape(cjs[name]), shape(esm[name]))) fail('the CommonJS build\'s ' + name + ' differs from the module\'s');
}
console.log('build-cjs: ' + path.relative(process.cwd(), cjsFile) + ' (' + expected.length + ' exports: ' + expected.join(', ') + ')');
