extension TrackingPage {
    /// The page's stylesheet: phone first, two columns from 56rem, light and dark schemes, system fonts only.
    static let stylesheet = #"""
        :root {
          color-scheme: light dark;
          --bg: #f3f5f8;
          --card: #ffffff;
          --text: #1b1f24;
          --muted: #57606a;
          --line: #d0d7de;
          --bar: #0b4f8a;
          --bar-text: #ffffff;
          --accent: #0b63b5;
          --good: #1a7f37;
          --good-bg: #dafbe1;
          --warning: #8a5a00;
          --warning-bg: #fff3cd;
          --map-bg: #eef3ea;
          --home: #b4461b;
          --institution: #6639ba;
          --volunteer: #0b63b5;
          --trail: #0b63b5;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #0d1117;
            --card: #161b22;
            --text: #e6edf3;
            --muted: #9da7b3;
            --line: #30363d;
            --bar: #0c2d4f;
            --accent: #58a6ff;
            --good: #56d364;
            --good-bg: #12361e;
            --warning: #e3b341;
            --warning-bg: #3b2e0a;
            --map-bg: #1b2420;
              --home: #f0883e;
            --institution: #bc8cff;
            --volunteer: #58a6ff;
            --trail: #58a6ff;
          }
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
        body {
          margin: 0;
          background: var(--bg);
          color: var(--text);
          font: 1rem/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
        }
        h1, h2, p { margin: 0; }
        .bar {
          display: flex;
          flex-wrap: wrap;
          gap: 0.5rem 1rem;
          align-items: center;
          justify-content: space-between;
          padding: 0.75rem 1rem;
          background: var(--bar);
          color: var(--bar-text);
        }
        .bar h1 { font-size: 1.15rem; font-weight: 600; overflow-wrap: anywhere; }
        .pill {
          font-size: 0.85rem;
          padding: 0.15rem 0.65rem;
          border-radius: 999px;
          background: rgba(255, 255, 255, 0.16);
          white-space: nowrap;
        }
        .pill[data-tone="good"]::before, .pill[data-tone="warning"]::before {
          content: "";
          display: inline-block;
          width: 0.55rem;
          height: 0.55rem;
          margin-right: 0.4rem;
          border-radius: 50%;
          background: #6fdd8b;
        }
        .pill[data-tone="warning"]::before { background: #ffd33d; }
        main {
          max-width: 72rem;
          margin: 0 auto;
          padding: 0.75rem;
          display: grid;
          gap: 0.75rem;
          grid-template-columns: minmax(0, 1fr);
          grid-template-areas: "status" "map" "facts" "events";
        }
        @media (min-width: 56rem) {
          main {
            padding: 1rem;
            gap: 1rem;
            grid-template-columns: minmax(0, 3fr) minmax(0, 2fr);
            grid-template-areas: "status status" "map facts" "map events";
            align-items: start;
          }
          .map-card { grid-row: span 2; }
        }
        .card {
          background: var(--card);
          border: 1px solid var(--line);
          border-radius: 12px;
          padding: 0.9rem 1rem;
          margin: 0;
        }
        .status { grid-area: status; display: grid; gap: 0.35rem; }
        .status h2 { font-size: 1.35rem; line-height: 1.25; }
        .destination { color: var(--muted); }
        .destination:empty, .notice:empty { display: none; }
        .notice, .final {
          border-left: 4px solid var(--accent);
          padding: 0.5rem 0.75rem;
          border-radius: 6px;
          background: var(--bg);
          font-weight: 500;
        }
        .notice[data-tone="warning"], .final[data-tone="warning"] { border-color: var(--warning); background: var(--warning-bg); }
        .notice[data-tone="good"], .final[data-tone="good"] { border-color: var(--good); background: var(--good-bg); }
        .final { margin-top: 0.25rem; padding: 0.9rem 1rem; border-radius: 10px; border-width: 1px 1px 1px 6px; border-style: solid; }
        .final[hidden] { display: none; }
        .final h2 { font-size: 1.2rem; margin-bottom: 0.25rem; }
        .map-card { grid-area: map; padding: 0.5rem; }
        .map { display: block; width: 100%; height: 20rem; border-radius: 8px; }
        @media (min-width: 56rem) { .map { height: 28rem; } }
        .map[hidden] { display: none; }
        .map.leaflet-container { background: var(--map-bg); font: inherit; }
        .map-desc { padding: 0.25rem; color: var(--muted); }
        .visually-hidden {
          position: absolute !important;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip: rect(0 0 0 0);
          white-space: nowrap;
        }
        .trail { fill: none; stroke: var(--trail); stroke-width: 4; stroke-linecap: round; stroke-linejoin: round; stroke-opacity: 0.55; }
        .route { fill: none; stroke: var(--muted); stroke-width: 2; stroke-dasharray: 6 6; stroke-opacity: 0.9; }
        .target-ring { fill: none; stroke: var(--good); stroke-width: 3; stroke-opacity: 1; }
        .marker { background: none; border: 0; }
        .marker svg { display: block; overflow: visible; }
        .leaflet-tooltip.marker-label {
          font-size: 12px;
          font-weight: 600;
          padding: 0 0.3rem;
          color: var(--text);
          background: var(--card);
          border: 1px solid var(--line);
          box-shadow: none;
        }
        .leaflet-tooltip.marker-label::before { display: none; }
        .home-marker .marker-shape { fill: var(--home); stroke: var(--card); stroke-width: 1.5; }
        .institution-marker .marker-shape { fill: var(--institution); stroke: var(--card); stroke-width: 1.5; }
        .volunteer-marker .marker-shape { fill: var(--volunteer); stroke: var(--card); stroke-width: 3; }
        .volunteer-marker.stale .marker-shape { fill: var(--muted); }
        .marker-detail { fill: none; stroke: var(--card); stroke-width: 2; }
        .marker-detail-fill { fill: #ffffff; }
        .legend {
          display: flex;
          flex-wrap: wrap;
          align-items: center;
          gap: 0.25rem 0.6rem;
          padding: 0.5rem 0.25rem 0.1rem;
          font-size: 0.85rem;
          color: var(--muted);
        }
        .legend[hidden] { display: none; }
        .key { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 3px; margin-right: -0.3rem; }
        .key-volunteer { background: var(--volunteer); border-radius: 50%; }
        .key-home { background: var(--home); }
        .key-institution { background: var(--institution); }
        .key-trail { background: var(--trail); opacity: 0.45; height: 0.25rem; }
        .facts-card { grid-area: facts; }
        .events-card { grid-area: events; }
        .facts-card h2, .events-card h2 { font-size: 1rem; margin-bottom: 0.5rem; color: var(--muted); font-weight: 600; }
        .facts {
          display: grid;
          grid-template-columns: repeat(2, minmax(0, 1fr));
          gap: 0.6rem 1rem;
          margin: 0;
        }
        .facts dt { font-size: 0.8rem; color: var(--muted); }
        .facts dd { margin: 0; font-size: 1.05rem; font-weight: 600; overflow-wrap: anywhere; }
        #distance, #eta { font-size: 1.5rem; font-variant-numeric: tabular-nums; }
        #age[data-stale="true"] { color: var(--warning); }
        .events {
          list-style: none;
          margin: 0;
          padding: 0;
          display: flex;
          flex-direction: column-reverse;
          gap: 0.4rem;
          max-height: 18rem;
          overflow-y: auto;
        }
        .events li { font-size: 0.92rem; padding-left: 0.6rem; border-left: 3px solid var(--line); }
        .events li[data-kind="arrival"], .events li[data-kind="ended-good"] { border-color: var(--good); }
        .events li[data-kind="pause"], .events li[data-kind="connection"],
        .events li[data-kind="stale"], .events li[data-kind="ended"] { border-color: var(--warning); }
        .events time { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: 0.35rem; }
        noscript .card { margin: 1rem; }
        """#
}
