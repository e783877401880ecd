// One trip against a live broker, written against the package's declarations and compiled by `tsc --strict` in an
// ES module project and in a CommonJS one (scripts/js-client-package-test): a donor watches, a volunteer publishes
// a fix with Core Location's -1 for speed and heading (the broker refuses -1: it must not be sent), the promise of
// publish() gives the broker's ack, and of a fix out of range its error; the donor sees the position once; the
// donation is delivered and the watch ends. The client module comes in as an argument, loaded by the caller
// through `import` or `require`.
import type { DonationWatcher, VolunteerPublisher, WebSocketConstructor, FixOutcome, Position, WatchEnd } from 'location-broker-client';

// The host's timers (node, React Native): the project's lib is ES2020 alone, as a React Native one is.
declare global {
  function setTimeout(callback: () => void, ms: number): unknown;
  function clearTimeout(id: unknown): void;
}

export interface Client {
  DonationWatcher: typeof DonationWatcher;
  VolunteerPublisher: typeof VolunteerPublisher;
}

export interface TripSetup {
  url: string;
  donation: string;
  donorToken: string;
  volunteerToken: string;
  WebSocket: WebSocketConstructor;
  /** The backend's part: the donation picked up, taken, delivered. */
  deliver: () => Promise<void>;
}

/** Resolves with the first value `subscribe` hands its callback, or rejects after `ms`. */
function within<T>(ms: number, what: string, subscribe: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no ' + what + ' within ' + ms + ' ms')), ms);
    subscribe((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

export async function runTrip(client: Client, setup: TripSetup): Promise<string> {
  const watcher = new client.DonationWatcher({ url: setup.url, donation: setup.donation, token: () => setup.donorToken, WebSocket: setup.WebSocket });
  const publisher = new client.VolunteerPublisher({
    url: setup.url, token: async () => setup.volunteerToken, WebSocket: setup.WebSocket, tokenIn: 'header',
  });
  try {
    const subscribed = within<boolean>(10_000, 'subscription', (done) => watcher.on('subscribed', (facts) => done(facts.tracking)));
    const seen: Position[] = [];
    const firstPosition = within<number>(10_000, 'position at the donor', (done) => watcher.on('position', ({ seq, position }) => {
      seen.push(position);
      done(seq);
    }));
    const ended = within<WatchEnd>(10_000, 'end of the watch', (done) => watcher.on('ended', done));
    watcher.start();
    check(await subscribed, 'the donation is tracked');

    publisher.start();
    const timestamp = Date.now();
    const accepted: FixOutcome = await publisher.publish({ lat: -34.6037, lon: -58.3816, accuracy: 12, speed: -1, heading: -1, timestamp });
    if (accepted.result !== 'accepted') throw new Error('the fix was not accepted: ' + JSON.stringify(accepted));
    check(typeof accepted.seq === 'number', 'the ack gives a seq');
    check(accepted.audience.tracking && accepted.audience.watchers === 1, 'the ack counts the donor: ' + JSON.stringify(accepted.audience));
    const refused = await publisher.publish({ lat: 91, lon: -58.3816, timestamp: timestamp + 1 });
    if (refused.result !== 'refused') throw new Error('a latitude of 91 was not refused: ' + JSON.stringify(refused));
    check(refused.code === 'invalid-position', 'refused as invalid-position, not ' + refused.code);

    const seq = await firstPosition;
    // The donor numbers positions in its own view (docs/PROTOCOL.md, 5.5), not the volunteer's ack.
    check(typeof seq === 'number' && seq > 0, 'the donor got seq ' + seq);
    const got = seen[0];
    check(Object.keys(got).sort().join() === 'accuracy,lat,lon,timestamp' && got.lat === -34.6037 && got.lon === -58.3816 &&
      got.accuracy === 12 && got.timestamp === timestamp, 'the donor got the fix without the absent values, not ' + JSON.stringify(got));

    await setup.deliver();
    const end = await ended;
    if (end.kind !== 'unsubscribed' || end.reason !== 'DELIVERED') throw new Error('the watch ended ' + JSON.stringify(end));
    check(seen.length === 1, 'the donor saw ' + seen.length + ' positions, not 1');
    return 'accepted as seq ' + seq + ', refused lat 91 (' + refused.code + '), seen once by the donor, ended ' + end.reason;
  } finally {
    publisher.close();
    watcher.close();
  }
}
