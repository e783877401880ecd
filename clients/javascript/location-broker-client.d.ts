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
   * How the token travels: `'query'` (`?token=`, the default; browsers can do nothing else) or `'header'`
   * (`Authorization: Bearer`, for React Native and the `ws` package, which take headers as a third argument).
   */
  tokenIn?: 'query' | 'header';
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
  | { kind: 'offline' };

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
  appEnteredForeground(): void;
  reconnectNow(): void;
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
  publish(position: Position): void;
  networkLost(): void;
  networkAvailable(): void;
  appEnteredForeground(): void;
  reconnectNow(): void;
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
