// The trip with the client loaded by TypeScript's own compiled import: ES `import` in the ES module project,
// `require()` in the CommonJS one. A CommonJS project stops here with TS1479 ("the referenced file is an ECMAScript
// module") unless the package's `require` condition leads to a CommonJS build with its own declarations.
import * as client from 'location-broker-client';
import { runTrip, type TripSetup } from './trip.js';

export function typedTrip(setup: TripSetup): Promise<string> {
  return runTrip(client, setup);
}
