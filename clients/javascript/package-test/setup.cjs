// The trip's setup from the environment scripts/js-client-package-test gives: the broker, the donation, the tokens,
// the `ws` package (Debian's node-ws, by its path: node 20 has no WebSocket of its own), and the backend's part.
'use strict';

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(name + ' is not set (run scripts/js-client-package-test)');
  return value;
}

exports.tripSetup = function tripSetup() {
  const base = required('LB_HTTP_URL');
  const key = required('LB_BACKEND_KEY');
  const donation = required('LB_DONATION');
  const body = JSON.parse(required('LB_DONATION_BODY'));
  async function put(state) {
    const response = await fetch(base + '/v1/donations/' + donation, {
      method: 'PUT', headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
      body: JSON.stringify(Object.assign({}, body, { state })),
    });
    if (response.status !== 200) throw new Error('PUT ' + state + ' answered ' + response.status + ': ' + await response.text());
  }
  return {
    url: base.replace(/^http/, 'ws') + '/v1/ws',
    donation,
    donorToken: required('LB_DONOR_TOKEN'),
    volunteerToken: required('LB_VOLUNTEER_TOKEN'),
    WebSocket: require(required('LB_WS_MODULE')),
    deliver: async () => {
      for (const state of ['PICKED-BY-VOLUNTEER', 'BEING-TAKEN-TO', 'DELIVERED']) await put(state);
    },
  };
};

exports.finish = function finish(how, promise) {
  promise.then((summary) => console.log('trip through ' + how + ': ' + summary), (error) => {
    console.error('trip through ' + how + ' failed: ' + (error && error.stack ? error.stack : error));
    process.exitCode = 1;
  });
};
