import BrokerCore
import BrokerHTTP
import BrokerProtocol
import Hummingbird
import Logging

/// The tracking page with its map: Leaflet from `leaflet_folder`, tiles from `map_tiles_file` or
/// `map_tiles_url`, and the routes that serve them.
package struct TrackingMap: Sendable {
    let page: TrackingPage
    let leaflet: LeafletAssets?
    let tiles: TileRoutes

    /// Reads Leaflet (missing: one warning, a page without the street map) and opens the tiles file (unusable:
    /// the broker refuses to start, saying why).
    /// - Parameter countRefusal: counts a refused request for a tile, by its code.
    package init(_ settings: MapSettings, countRefusal: @escaping @Sendable (ErrorCode) -> Void, logger: Logger) throws {
        try settings.validate()
        leaflet = LeafletAssets.load(folder: settings.leafletFolder, logger: logger)
        var source = TrackingPage.MapSource()
        var file: MBTiles?
        if let path = settings.tilesFile {
            let opened: MBTiles
            do {
                opened = try MBTiles(path: path)
            } catch let unusable as MBTiles.Unusable {
                // A setting to fix, reported as such (not as a store that cannot be opened).
                throw ConfigurationError(description: unusable.description)
            }
            file = opened
            source.tiles = TileRoutes.template
            source.minZoom = opened.minZoom
            source.maxZoom = opened.maxZoom
            let b = opened.bounds
            source.bounds = "\(b.west),\(b.south),\(b.east),\(b.north)"
            logger.info("map tiles from map_tiles_file", metadata: ["file": "\(path)", "zooms": "\(opened.minZoom)-\(opened.maxZoom)"])
        } else if let url = settings.tilesURL {
            source.tiles = url.text
            source.imageOrigin = url.origin
            source.attribution = settings.tilesAttribution
            logger.info("map tiles from map_tiles_url: donors' browsers ask that server for the area they look at", metadata: ["origin": "\(url.origin)"])
        }
        page = TrackingPage(leaflet: leaflet != nil, map: source)
        tiles = TileRoutes(tiles: file, countRefusal: countRefusal, logger: logger)
    }

    package func register(on router: Router<BrokerRequestContext>) {
        page.register(on: router)
        leaflet?.register(on: router)
        tiles.register(on: router)
    }
}
