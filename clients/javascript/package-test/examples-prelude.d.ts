// What the documentation's examples leave to the app, declared loosely, and the React Native modules they import,
// declared as much as the examples use them (the real modules are not installed here: the client does not depend
// on them). The client's own names are not declared here: they come from the installed package.
declare const backend: {
  donorToken(): Promise<string>;
  volunteerToken(): Promise<string>;
};
declare const screen: any;
declare const map: any;
declare const gps: {
  setInterval(seconds: number): void;
  onFix(listener: (fix: { lat: number; lon: number; speed: number; timestamp: number }) => void): void;
};
declare function log(...values: unknown[]): void;
declare function time(milliseconds: number): string;
declare function fetch(url: string): Promise<{ text(): Promise<string> }>;

declare module 'react-native' {
  export type AppStateStatus = 'active' | 'background' | 'inactive' | 'unknown' | 'extension';
  export const AppState: {
    currentState: AppStateStatus;
    addEventListener(type: 'change' | 'memoryWarning' | 'blur' | 'focus', listener: (state: AppStateStatus) => void): { remove(): void };
  };
}

declare module '@react-native-community/netinfo' {
  export interface NetInfoState {
    type: string;
    isConnected: boolean | null;
    isInternetReachable: boolean | null | undefined;
    details: unknown;
  }
  const NetInfo: { addEventListener(listener: (state: NetInfoState) => void): () => void };
  export default NetInfo;
}

declare module '@react-native-community/geolocation' {
  export interface GeolocationResponse {
    coords: { latitude: number; longitude: number; altitude: number | null; accuracy: number; altitudeAccuracy: number | null; heading: number | null; speed: number | null };
    timestamp: number;
  }
  const Geolocation: {
    watchPosition(success: (position: GeolocationResponse) => void, error?: (error: unknown) => void, options?: object): number;
    clearWatch(watchID: number): void;
  };
  export default Geolocation;
}
