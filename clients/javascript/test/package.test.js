// The package: the CommonJS build is made from the one ES module by scripts/build-cjs.mjs (never a second copy),
// exports the same things, and package.json leads `import`, `require` and TypeScript to the right files.
// scripts/js-client-package-test installs the packed tarball and runs real trips through each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esm from '../location-broker-client.js';

const folder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const build = path.join(folder, 'scripts', 'build-cjs.mjs');

function scratch() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'lb-client-build-'));
}

test('the CommonJS build is generated from the ES module and works under require()', () => {
  const out = scratch();
  try {
    execFileSync(process.execPath, [build, '--out', out], { stdio: 'pipe' });
    const cjs = createRequire(import.meta.url)(path.join(out, 'location-broker-client.cjs'));
    assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
    assert.deepEqual(cjs.DEFAULTS, esm.DEFAULTS);
    assert.deepEqual(cjs.brokerPosition({ lat: 1, lon: 2, speed: -1, timestamp: 3 }), { lat: 1, lon: 2, timestamp: 3 });
    const text = fs.readFileSync(path.join(out, 'location-broker-client.cjs'), 'utf8');
    const source = fs.readFileSync(path.join(folder, 'location-broker-client.js'), 'utf8');
    // Line for line the source, with `export ` taken off: a change to the module is a change to the build.
    assert.equal(text.split('\n').slice(2, 2 + source.split('\n').length).join('\n').trimEnd(), source.replace(/^export /gm, '').trimEnd());
    const declarations = fs.readFileSync(path.join(out, 'location-broker-client.d.cts'), 'utf8');
    assert.ok(declarations.endsWith(fs.readFileSync(path.join(folder, 'location-broker-client.d.ts'), 'utf8')));
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('the build refuses module syntax it does not convert rather than write a wrong file', () => {
  const out = scratch();
  try {
    for (const line of ["import { x } from './x.js';", 'export default 1;', 'export { a as b };', 'const here = import.meta.url;']) {
      const source = path.join(out, 'broken.js');
      fs.writeFileSync(source, 'export const a = 1;\n' + line + '\n');
      const run = spawnSync(process.execPath, [build, '--source', source, '--out', out], { encoding: 'utf8' });
      assert.equal(run.status, 1, line);
      assert.match(run.stderr, /broken\.js:2: module syntax this build does not convert/, line);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test("package.json: publishable, import and require each to its file with its types, the built files packed", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
  assert.equal(manifest.private, undefined, 'not private');
  assert.equal(manifest.type, 'module');
  assert.deepEqual(manifest.exports['.'], {
    import: { types: './location-broker-client.d.ts', default: './location-broker-client.js' },
    require: { types: './location-broker-client.d.cts', default: './location-broker-client.cjs' },
  });
  for (const file of ['location-broker-client.js', 'location-broker-client.d.ts', 'location-broker-client.cjs', 'location-broker-client.d.cts']) {
    assert.ok(manifest.files.includes(file), file + ' is packed');
  }
  assert.equal(manifest.scripts.prepack, 'node scripts/build-cjs.mjs && node scripts/copy-licence.mjs',
    'npm pack builds the CommonJS files and brings the licence first');
  assert.ok(manifest.files.includes('LICENSE'));
  // The licence named is the repository's.
  const licence = fs.readFileSync(path.join(folder, '..', '..', 'LICENSE'), 'utf8');
  assert.equal(manifest.license, 'Apache-2.0');
  assert.match(licence, /^\s*Apache License\s+Version 2\.0, January 2004/);
  assert.deepEqual(manifest.dependencies, undefined, 'no dependencies');
});

test("the package's version is the broker's release, as BrokerRelease defines it", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
  const release = fs.readFileSync(path.join(folder, '..', '..', 'Sources', 'BrokerStorage', 'BrokerRelease.swift'), 'utf8');
  const match = release.match(/static let version = "([^"]+)"/);
  assert.ok(match, 'BrokerRelease.swift defines the version');
  assert.equal(manifest.version, match[1]);
});
