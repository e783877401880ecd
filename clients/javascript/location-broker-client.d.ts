// Type declarations for location-broker-client.js (docs/CLIENTS.md, "JavaScript and TypeScript").

/** A position as the broker carries it (docs/PROTOCOL.md, "The position object"). Times in milliseconds. */
export interface Position {
  lat: number;
  lon: number;
  accuracy?: number;
  speed?: number;
  heading?: number;
  timestamp: number;
}

/**
 * A fix as an app hands it to `publish()`: `accuracy`, `speed` and `heading` may say "absent" the way Core Location
 * (-1) or a browser (null) does; they are left out before sending (see `brokerPosition`).
 */
export interface Fix {
  lat: number;
  lon: number;
  accuracy?: number | null;
  speed?: number | null;
  heading?: number | null;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/**
 * The position sent for `fix`, by the Swift client's rule: `accuracy`, `speed` and `heading` left out when negative,
 * null, missing or not finite, a heading of 360 or more taken modulo 360, any other field dropped.
 */
export function brokerPosition(fix: Fix): Position;

/** What the Geolocation API (a browser's, React Native's geolocation modules) hands to its callbacks. */
export interface GeolocationFix {
  coords: { latitude: number; longitude: number; accuracy?: number | null; speed?: number | null; heading?: number | null };
  timestamp: number;
}

/** The position for a Geolocation API fix, absent values left out as `brokerPosition` does. */
export function positionFromGeolocation(location: GeolocationFix): Position;

/** React Native's `AppState`, as the client uses it (passed in: the client does not depend on react-native). */
export interface AppStateLike {
  currentState: string | null;
  addEventListener(type: 'change', listener: (state: any) => void): { remove(): void } | void;
  removeEventListener?(type: 'change', listener: (state: any) => void): void;
}

/** `@react-native-community/netinfo`'s default export, as the client uses it. */
export interface NetInfoLike {
  addEventListener(listener: (state: { isConnected: boolean | null }) => void): () => void;
}

export interface AppStateOptions {
  /**
   * 'pause': close the connection in the background, make it again at once in the foreground (the watcher's
   * default). 'stay': keep it, as far as the system lets the app run (the publisher's default).
   */
  background?: 'pause' | 'stay';
}

export type DonationState =
  | 'CREATED' | 'BEING-LOOKED-FOR' | 'DELIVERED-BY-DONOR' | 'PICKED-BY-VOLUNTEER' | 'BEING-TAKEN-TO' | 'DELIVERED' | 'CANCELLED';
export type Destination = 'home' | 'institution';

/** The numbers the rules use; every one may be changed through the options. */
export interface Numbers {
  backoffInitialMs: number;
  backoffCapMs: number;
  /** The least wait after 4029, 4009 or HTTP 429. */
  backoffPatienceMs: number;
  /** The silence window before `welcome` announced the broker's heartbeat. */
  assumedHeartbeatMs: number;
  openTimeoutMs: number;
  subscribeTimeoutMs: number;
  notTrackableRetryMs: number;
  staleAfterMs: number;
  minimumAttemptGapMs: number;
  silenceBeforeReplacingMs: number;
  tokenRenewalMarginMs: number;
  ackTimeoutMs: number;
  maximumFixAgeMs: number;
  diagnoseTimeoutMs: number;
}

export const DEFAULTS: Readonly<Numbers>;

/** The WebSocket the client needs: the browser's, React Native's, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener?(type: string, listener: (event: any) => void): void;
  onopen?: ((event: any) => void) | null;
  onmessage?: ((event: any) => void) | null;
  onclose?: ((event: any) => void) | null;
  onerror?: ((event: any) => void) | null;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) => WebSocketLike;

/** Timers and a clock in milliseconds; tests pass a hand-moved one. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  now(): number;
}

export interface ClientOptions extends Partial<Numbers> {
  /** The broker's WebSocket address: `wss://broker.example.org/v1/ws`. */
  url: string;
  /** Gives the token; called when there is none, when it expires within a minute, and after the broker refused it. */
  token: () => string | Promise<string>;
  /** The WebSocket implementation; the global `WebSocket` when left out. */
  WebSocket?: WebSocketConstructor;
  /** Used to learn why an upgrade was refused (a plain GET of the same address); the global `fetch` when left out. */
  fetch?: (url: string, init?: any) => Promise<{ status: number; json(): Promise<any> }>;
  /**
   * How the token travels: `'header'` (`Authorization: Bearer`, for React Native and the `ws` package, which take
   * headers as a third argument) or `'query'` (`?token=`; browsers can do nothing else). `'auto'` (the default):
   * the header under React Native (`navigator.product` is 'ReactNative'), the query elsewhere.
   */
  tokenIn?: 'auto' | 'query' | 'header';
  timers?: Timers;
  /** The jitter's source, uniform in [0, 1). */
  random?: () => number;
}

export type ConnectionChange =
  | { kind: 'connecting' }
  | { kind: 'connected' }
  | { kind: 'reconnecting'; delayMs: number; attempt: number; reason: string; at: number }
  /** Subscribed again (the watcher: `since` asked for, and the donation's state now; the publisher: welcomed again). */
  | { kind: 'reconnected'; since: number | null; state?: DonationState; tracking?: boolean }
  | { kind: 'offline' }
  /** Closed while the app is in the background (appEnteredBackground, attachAppState's 'pause'). */
  | { kind: 'background' };

export interface DonationFacts {
  donation: string;
  channel: string;
  state: DonationState;
  tracking: boolean;
  destination: Destination | null;
  home: { lat: number; lon: number; label?: string } | null;
  institution: { lat: number; lon: number; name?: string } | null;
  /** null while the trip is paused: the broker tells nothing of the volunteer then. */
  online: boolean | null;
}

export type WatchEnd =
  | { kind: 'unsubscribed'; reason: 'DELIVERED' | 'CANCELLED' | 'volunteer-changed' | 'deleted' | 'client' | string }
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'refusedAfterReconnect'; code: string; message: string }
  | { kind: 'unauthorized'; message: string }
  | { kind: 'connectionFailed'; message: string }
  | { kind: 'stopped' };

export interface WatcherEvents {
  connection: ConnectionChange;
  subscribed: DonationFacts;
  waiting: {};
  position: { seq: number; position: Position };
  paused: { state: DonationState };
  resumed: { state: DonationState; destination: Destination | null };
  state: { state: DonationState; tracking: boolean; destination: Destination | null };
  presence: { online: boolean; lastSeen: number | null };
  arrival: { place: Destination; distance: number };
  stale: { lastFix: number };
  fresh: {};
  'not-trackable': { message: string; retryAt: number };
  ended: WatchEnd;
}

export interface WatcherOptions extends ClientOptions {
  /** The donation to watch (recommended); or `channel`, the volunteer's. Exactly one. */
  donation?: string;
  channel?: string;
  /** Ask again every `notTrackableRetryMs` while the trip has not started (default true); false ends instead. */
  waitWhileNotTrackable?: boolean;
}

/** Follows one donation for its donor across reconnects. */
export class DonationWatcher {
  constructor(options: WatcherOptions);
  on<K extends keyof WatcherEvents>(type: K, listener: (detail: WatcherEvents[K]) => void): () => void;
  start(): void;
  /** Stops: closes the socket, leaves no timer running; `ended` says `{kind: 'stopped'}`. */
  close(): void;
  networkLost(): void;
  networkAvailable(): void;
  /** Closes the connection (1000) and makes no attempt until `appEnteredForeground()`. */
  appEnteredBackground(): void;
  appEnteredForeground(): void;
  reconnectNow(): void;
  /** Follows React Native's AppState (default `{background: 'pause'}`); returns a function that stops following. */
  attachAppState(AppState: AppStateLike, options?: AppStateOptions): () => void;
  /** Follows NetInfo: no attempt while offline, one at once when back; returns a function that stops following. */
  attachNetInfo(NetInfo: NetInfoLike): () => void;
  readonly tracking: boolean;
  readonly highestSeq: number | null;
  readonly facts: DonationFacts | null;
  readonly ended: WatchEnd | null;
}

export interface Audience {
  tracking: boolean;
  watchers: number;
  reason?: 'no-trackable-donation' | 'before-window' | 'too-old' | string;
}

export type FixOutcome =
  | { position: Position; result: 'accepted'; seq: number | null; audience: Audience }
  | { position: Position; result: 'refused'; code: string; message: string }
  | { position: Position; result: 'superseded' }
  | { position: Position; result: 'dropped'; reason: string };

export interface PublisherEvents {
  connection: ConnectionChange;
  audience: Audience;
  fix: FixOutcome;
  stopped: { reason: string };
}

/** Publishes a volunteer's fixes: each until its ack, the newest after a reconnect. */
export class VolunteerPublisher {
  constructor(options: ClientOptions);
  on<K extends keyof PublisherEvents>(type: K, listener: (detail: PublisherEvents[K]) => void): () => void;
  start(): void;
  close(): void;
  /**
   * Sends the fix (absent values left out) or keeps it for the next connection; the promise resolves with its
   * outcome, the object the 'fix' event carries: the broker's `ack` ('accepted') or `error` ('refused'),
   * 'superseded' or 'dropped'. It never rejects.
   */
  publish(fix: Fix): Promise<FixOutcome>;
  networkLost(): void;
  networkAvailable(): void;
  /** Closes the connection (1000) until `appEnteredForeground()`; the newest fix handed over meanwhile is sent then. */
  appEnteredBackground(): void;
  appEnteredForeground(): void;
  reconnectNow(): void;
  /** Follows React Native's AppState (default `{background: 'stay'}`); returns a function that stops following. */
  attachAppState(AppState: AppStateLike, options?: AppStateOptions): () => void;
  /** Follows NetInfo: no attempt while offline, one at once when back; returns a function that stops following. */
  attachNetInfo(NetInfo: NetInfoLike): () => void;
  readonly audience: Audience | null;
}

export type Ending =
  | { kind: 'closed'; code: number | null; reason: string }
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'dead'; reason: string };

export const Ending: {
  closed(code: number | null | undefined, reason?: string): Ending;
  refused(status: number, message: string): Ending;
  unreachable(reason: string): Ending;
  dead(reason: string): Ending;
};

/** What an ending calls for: retry after the backoff, a fresh token then at once, or stop. */
export function verdict(ending: Ending): 'retry' | 'renew' | 'stop';
export function describeEnding(ending: Ending): string;
export function backoffCeiling(attempt: number, initialMs: number, capMs: number): number;
/** A JWT's `exp` in milliseconds, or null. */
export function tokenExpiry(token: string): number | null;

export type RulesAction =
  | { type: 'connect'; renew: boolean }
  | { type: 'wait'; delayMs: number; attempt: number; reason: string }
  | { type: 'stop'; reason: string; ending: Ending }
  | { type: 'none' };

/** The reconnect state machine, without I/O (Swift's ConnectionStateMachine). */
export class ReconnectRules {
  constructor(numbers?: Partial<Numbers>, random?: () => number);
  readonly numbers: Numbers;
  readonly failures: number;
  readonly keepaliveMs: number;
  start(): RulesAction;
  opened(): void;
  welcomed(heartbeatSeconds: number): void;
  attempting(now: number): void;
  ended(ending: Ending, now: number): RulesAction;
  delayElapsed(): RulesAction;
  connectivityReturned(now: number): RulesAction;
  stop(): void;
  delay(attempt: number, minimumMs?: number): number;
}
