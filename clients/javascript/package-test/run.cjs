// In the CommonJS project: `node run.cjs require` loads the installed package with `require()`; `node run.cjs
// typescript` runs the trip as TypeScript compiled it (nodenext, CommonJS).
'use strict';
const setup = require('./setup.cjs');

const how = process.argv[2];
if (how === 'require') setup.finish('require', require('./dist/trip.js').runTrip(require('location-broker-client'), setup.tripSetup()));
else if (how === 'typescript') setup.finish('TypeScript (CommonJS)', require('./dist/typed.js').typedTrip(setup.tripSetup()));
else throw new Error('usage: node run.cjs require|typescript');
