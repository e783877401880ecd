extension TrackingPage {
    /// The page. Facts are text first (headline, notice, the details list, the event log); the map repeats
    /// them as a picture with a text description. Live regions: the notice (`role=status`), the event log
    /// (`role=log`) and the final message (`role=alert`), so a screen reader announces state changes,
    /// arrival and the end of tracking without the donor looking for them. Leaflet's files are linked only when
    /// the broker serves them; the map's tiles, attribution, zooms and bounds are data attributes of `#map`.
    static func html(leaflet: Bool, map: MapSource) -> String {
        let leafletTags =
            leaflet
            ? #"<link rel="stylesheet" href="\#(LeafletAssets.prefix)leaflet.css">"# + "\n"
                + #"<script src="\#(LeafletAssets.prefix)leaflet.js" defer></script>"# + "\n" : ""
        var mapAttributes = ""
        for (name, value) in [
            ("tiles", map.tiles), ("attribution", map.attribution), ("min-zoom", map.minZoom.map(String.init)),
            ("max-zoom", map.maxZoom.map(String.init)), ("bounds", map.bounds),
        ] {
            if let value { mapAttributes += " data-\(name)=\"\(escapeAttribute(value))\"" }
        }
        return #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <meta name="color-scheme" content="light dark">
        <title>Tracking your donation</title>
        <link rel="icon" href="data:,">
        \#(leafletTags)<link rel="stylesheet" href="/assets/tracking-page.css">
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
            <div id="map" class="map" role="img" aria-labelledby="map-title map-desc"\#(mapAttributes)></div>
            <p id="map-title" class="visually-hidden">Map of the trip</p>
            <p id="map-desc" class="map-desc">Waiting for the trip's details.</p>
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

    /// `text` safe inside a double-quoted HTML attribute.
    static func escapeAttribute(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
