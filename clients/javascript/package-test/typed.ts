// The trip with the client loaded by TypeScript's own compiled import: ES `import` in the ES module project,
// `require()` in the CommonJS one. This is where a CommonJS project met TS1479 before the package had a
// CommonJS build with its own declarations.
import * as client from 'location-broker-client';
import { runTrip, type TripSetup } from './trip.js';

export function typedTrip(setup: TripSetup): Promise<string> {
  return runTrip(client, setup);
}
