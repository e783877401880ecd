extension TrackingPage {
    /// The page's files (Sources/TrackingPage/Resources/page/), compiled into the broker by SwiftPM's `embedInCode`
    /// resources (`PackageResources`): the broker stays one binary that needs no folder beside it.
    enum Files {
        /// page.html, with `{{leaflet}}` and `{{map}}` where ``TrackingPage/html(leaflet:map:)`` writes what this
        /// broker serves.
        static let html = text(PackageResources.page_html)
        /// page.css: phone first, two columns from 56rem, light and dark schemes, system fonts only.
        static let stylesheet = text(PackageResources.page_css)
        /// The script's parts in the order they run, by what they do: the state (constants, token, words and
        /// numbers, geometry, speed, the event log, frames, the end), the connection, rendering the text, the map,
        /// the "Notify me" box (Web Push), and the start. ``TrackingPage/script`` joins them in one function.
        static let scripts: [(name: String, text: String)] = [
            ("state.js", text(PackageResources.state_js)),
            ("connection.js", text(PackageResources.connection_js)),
            ("rendering.js", text(PackageResources.rendering_js)),
            ("map.js", text(PackageResources.map_js)),
            ("push.js", text(PackageResources.push_js)),
            ("start.js", text(PackageResources.start_js)),
        ]

        /// The JavaScript client (clients/javascript/location-broker-client.js, through the symbolic link
        /// Resources/page/location-broker-client.js), an ES module served as it is: the page's script imports its
        /// `DonationWatcher`, so the repository has one JavaScript reconnect implementation.
        static let client = text(PackageResources.location_broker_client_js)

        /// push-worker.js: the service worker that shows the broker's pushes as notifications, served alone at
        /// ``TrackingPage/pushWorkerPath`` (a classic script, not part of the page's module).
        static let pushWorker = text(PackageResources.push_worker_js)

        private static func text(_ bytes: [UInt8]) -> String {
            String(decoding: bytes, as: UTF8.self)
        }
    }
}
