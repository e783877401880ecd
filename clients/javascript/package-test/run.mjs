// In the ES module project: `node run.mjs import` loads the installed package with `import`; `node run.mjs
// typescript` runs the trip as TypeScript compiled it (nodenext, an ES module).
import * as client from 'location-broker-client';
import setup from './setup.cjs';
import { runTrip } from './dist/trip.js';
import { typedTrip } from './dist/typed.js';

const how = process.argv[2];
if (how === 'import') setup.finish('import', runTrip(client, setup.tripSetup()));
else if (how === 'typescript') setup.finish('TypeScript (ES module)', typedTrip(setup.tripSetup()));
else throw new Error('usage: node run.mjs import|typescript');
