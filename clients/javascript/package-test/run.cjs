// In the CommonJS project: `node run.cjs require` loads the installed package with `require()`; `node run.cjs
// typescript` runs the trip as TypeScript compiled it (nodenext, CommonJS).
'use strict';
const setup = require('./setup.cjs');

// The CommonJS build, not the ES module: node 20.19 and newer could require() the module itself, older ones fail
// with ERR_REQUIRE_ESM, and a bundler or Jest would take the module's `import` syntax where it wants CommonJS.
const resolved = require.resolve('location-broker-client');
if (!resolved.endsWith('location-broker-client.cjs')) throw new Error('require() resolved the package to ' + resolved);

const how = process.argv[2];
if (how === 'require') setup.finish('require', require('./dist/trip.js').runTrip(require('location-broker-client'), setup.tripSetup()));
else if (how === 'typescript') setup.finish('TypeScript (CommonJS)', require('./dist/typed.js').typedTrip(setup.tripSetup()));
else throw new Error('usage: node run.cjs require|typescript');
