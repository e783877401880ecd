// A stand-in for @react-native-community/netinfo in the scratch project (run-react-native-example.mjs).
'use strict';
module.exports = globalThis.reactNativeStandIns.NetInfo;
