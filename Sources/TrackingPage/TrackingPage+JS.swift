extension TrackingPage {
    /// The page's script: the donor's side of docs/PROTOCOL.md in a browser. It mirrors tracker-watch
    /// (WatchRendering): the same words, formats, staleness rule, speed smoothing, backoff, and recovery with
    /// `since`. The map is Leaflet's (when the broker serves it: `L`); every fact is also text. Text goes into
    /// the page only through `textContent` (and Leaflet only gets elements or escaped text).
    ///
    /// An ES module (strict, nothing of it global) that imports the JavaScript client's `DonationWatcher`
    /// (``clientPath``), then one function, so that start.js may return early: the broker writes the import and the
    /// function's first and last lines, then the shared numbers (``constants``), then the files of Resources/page/
    /// in order (``Files/scripts``).
    /// Its source map (``sourceMap``) names those files, so a browser's developer tools show their own names and
    /// line numbers.
    static let script = scriptPieces.map(\.text).joined() + "//# sourceMappingURL=\(sourceMapName)\n"

    /// The pieces of ``script``, each ending with a newline, with the name a source map gives them (`nil`: the
    /// function's first and last lines, which no file holds).
    static let scriptPieces: [(name: String?, text: String)] =
        [(nil, "import { DonationWatcher } from '\(clientPath)';\n(function () {\n"), ("constants.js", constants)]
        + Files.scripts.map { (name: Optional($0.name), text: $0.text) }
        + [(nil, "})();\n")]

    /// The source map's file name beside the script.
    static let sourceMapName = "tracking-page.js.map"
}
