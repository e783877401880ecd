extension TrackingPage {
    /// The page. Facts are text first (headline, notice, the details list, the event log); the map repeats
    /// them as a picture with a text description. Live regions: the notice (`role=status`), the event log
    /// (`role=log`) and the final message (`role=alert`), so a screen reader announces state changes,
    /// arrival and the end of tracking without the donor looking for them.
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <meta name="color-scheme" content="light dark">
        <title>Tracking your donation</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/assets/tracking-page.css">
        <script src="/assets/tracking-page.js" defer></script>
        </head>
        <body>
        <header class="bar">
          <h1 id="title">Your donation</h1>
          <p class="pill" id="connection" data-tone="warning">connecting…</p>
        </header>
        <main>
          <section class="card status" aria-labelledby="headline">
            <h2 id="headline">Connecting to the broker…</h2>
            <p id="destination" class="destination"></p>
            <p id="notice" class="notice" role="status" aria-live="polite" aria-atomic="true" data-tone="normal"></p>
            <div id="final" class="final" role="alert" aria-atomic="true" data-tone="normal" hidden>
              <h2 id="final-title"></h2><p id="final-message"></p>
            </div>
          </section>


          <figure class="card map-card">
            <svg id="map" class="map" viewBox="0 0 400 300" role="img" aria-labelledby="map-title map-desc" focusable="false">
              <title id="map-title">Map of the trip</title>
              <desc id="map-desc">Waiting for the trip's details.</desc>
              <rect class="map-bg" x="0" y="0" width="400" height="300" rx="10"/>
              <g class="map-grid" aria-hidden="true">
                <path d="M50 0V300M100 0V300M150 0V300M200 0V300M250 0V300M300 0V300M350 0V300M0 50H400M0 100H400M0 150H400M0 200H400M0 250H400"/>
              </g>
              <polyline id="trail" class="trail" points=""/>
              <line id="route" class="route" x1="0" y1="0" x2="0" y2="0" visibility="hidden"/>
              <circle id="target-ring" class="target-ring" r="19" cx="0" cy="0" visibility="hidden"/>
              <g id="home-marker" class="marker home-marker" visibility="hidden">
                <path class="marker-shape" d="M0 -12L13 0H9V11H-9V0H-13Z"/>
                <path class="marker-detail" d="M-3 11V4H3V11"/>
                <text id="home-label" class="marker-label" y="26" text-anchor="middle">Home</text>
              </g>
              <g id="institution-marker" class="marker institution-marker" visibility="hidden">
                <path class="marker-shape" d="M0 -13L14 -5V-2H-14V-5ZM-12 8H12V12H-12ZM-10 -1H-6V7H-10ZM-2 -1H2V7H-2ZM6 -1H10V7H6Z"/>
                <text id="institution-label" class="marker-label" y="27" text-anchor="middle">Institution</text>
              </g>
              <g id="volunteer-marker" class="marker volunteer-marker" visibility="hidden">
                <circle class="marker-shape" r="12"/>
                <path id="volunteer-arrow" class="marker-detail-fill" d="M0 -8L6 6L0 3L-6 6Z"/>
                <circle id="volunteer-dot" class="marker-detail-fill" r="4"/>
              </g>
              <g class="north" transform="translate(378 26)" aria-hidden="true">
                <path d="M0 -14L6 4L0 0L-6 4Z"/>
                <text y="16" text-anchor="middle">N</text>
              </g>
              <g class="scale" transform="translate(16 284)" aria-hidden="true">
                <path id="scale-line" d="M0 -6V0H80V-6"/>
                <text id="scale-label" x="4" y="-10"></text>
              </g>
            </svg>
            <figcaption class="legend">
              <span class="key key-volunteer" aria-hidden="true"></span> Volunteer
              <span class="key key-home" aria-hidden="true"></span> Your home
              <span class="key key-institution" aria-hidden="true"></span> Institution
              <span class="key key-trail" aria-hidden="true"></span> Path so far
            </figcaption>
          </figure>

          <section class="card facts-card" aria-labelledby="facts-title">
            <h2 id="facts-title">Details</h2>
            <dl class="facts">
              <div><dt id="distance-label">Distance</dt><dd id="distance">—</dd></div>
              <div><dt>Arrives in</dt><dd id="eta">—</dd></div>
              <div><dt>Last location</dt><dd id="age">—</dd></div>
              <div><dt>Volunteer</dt><dd id="presence">—</dd></div>
              <div><dt>Moving</dt><dd id="heading">—</dd></div>
              <div><dt>Speed</dt><dd id="speed">—</dd></div>
              <div><dt>Accuracy</dt><dd id="accuracy">—</dd></div>
              <div><dt>Your home</dt><dd id="home">—</dd></div>
              <div><dt>Institution</dt><dd id="institution">—</dd></div>
            </dl>
          </section>

          <section class="card events-card" aria-labelledby="events-title">
            <h2 id="events-title">What happened</h2>
            <ol id="events" class="events" role="log" aria-live="polite" aria-relevant="additions"></ol>
          </section>
        </main>
        <noscript><p class="card">This page needs JavaScript to show where the volunteer is.</p></noscript>
        </body>
        </html>
        """#
}
