// A stand-in for react-native in the scratch project (run-react-native-example.mjs): the AppState it set up.
'use strict';
exports.AppState = globalThis.reactNativeStandIns.AppState;
