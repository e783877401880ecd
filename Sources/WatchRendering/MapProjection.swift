import BrokerProtocol
import Foundation

/// An equirectangular projection of a small area onto terminal cells, north up.
///
/// East-west distances are scaled by cos(latitude) at the centre, and a cell is taken as ``cellAspect`` times as
/// tall as it is wide, so one row covers that many times the metres of one column and shapes keep their proportions.
public struct MapProjection: Sendable, Equatable {
    /// A terminal cell is about twice as tall as it is wide.
    public static let defaultCellAspect = 2.0
    /// The smallest area a map shows (300 m across), so a lone point does not zoom in to a few metres.
    public static let defaultMinimumSpan = 300.0

    public var centerLat: Double
    public var centerLon: Double
    /// Metres covered by one column.
    public var metresPerColumn: Double
    /// Height of a cell over its width.
    public var cellAspect: Double
    public var columns: Int
    public var rows: Int

    /// Metres covered by one row.
    public var metresPerRow: Double { metresPerColumn * cellAspect }

    public init(centerLat: Double, centerLon: Double, metresPerColumn: Double, columns: Int, rows: Int, cellAspect: Double = defaultCellAspect) {
        self.centerLat = centerLat
        self.centerLon = centerLon
        self.metresPerColumn = metresPerColumn
        self.columns = columns
        self.rows = rows
        self.cellAspect = cellAspect
    }

    /// The projection that shows every point inside a `columns` × `rows` grid, keeping `marginColumns` and
    /// `marginRows` free at each edge, and at least `minimumSpan` metres across.
    /// - Returns: `nil` when there are no points or no room.
    public static func fit(
        _ points: [WatchViewModel.Point], columns: Int, rows: Int, marginColumns: Int = 2, marginRows: Int = 1,
        minimumSpan: Double = defaultMinimumSpan, cellAspect: Double = defaultCellAspect
    ) -> MapProjection? {
        let points = points.filter { $0.lat.isFinite && $0.lon.isFinite }
        guard let first = points.first, columns > 0, rows > 0 else { return nil }
        var minLat = first.lat, maxLat = first.lat, minLon = first.lon, maxLon = first.lon
        for point in points {
            minLat = min(minLat, point.lat)
            maxLat = max(maxLat, point.lat)
            minLon = min(minLon, point.lon)
            maxLon = max(maxLon, point.lon)
        }
        var projection = MapProjection(
            centerLat: (minLat + maxLat) / 2, centerLon: (minLon + maxLon) / 2, metresPerColumn: 1, columns: columns, rows: rows,
            cellAspect: cellAspect)
        let (west, south) = projection.metres(lat: minLat, lon: minLon)
        let (east, north) = projection.metres(lat: maxLat, lon: maxLon)
        let usableColumns = Double(max(1, columns - 1 - 2 * marginColumns))
        let usableRows = Double(max(1, rows - 1 - 2 * marginRows))
        let spanX = max(east - west, 0), spanY = max(north - south, 0)
        projection.metresPerColumn = max(spanX / usableColumns, spanY / (cellAspect * usableRows), minimumSpan / usableColumns)
        return projection
    }

    /// Metres east and north of the centre.
    public func metres(lat: Double, lon: Double) -> (east: Double, north: Double) {
        let radiansPerDegree = Double.pi / 180
        let east = (lon - centerLon) * radiansPerDegree * Geodesy.earthRadius * cos(centerLat * radiansPerDegree)
        let north = (lat - centerLat) * radiansPerDegree * Geodesy.earthRadius
        return (east, north)
    }

    /// The cell a point falls in: column from the left, row from the top (so north is up). May lie outside the grid.
    public func cell(lat: Double, lon: Double) -> (column: Int, row: Int) {
        let (east, north) = metres(lat: lat, lon: lon)
        let column = (Double(columns - 1) / 2 + east / metresPerColumn).rounded()
        let row = (Double(rows - 1) / 2 - north / metresPerRow).rounded()
        return (Self.integer(column), Self.integer(row))
    }

    /// A rounded cell coordinate as an Int; far-away or non-finite values land far outside any grid.
    private static func integer(_ value: Double) -> Int {
        guard value.isFinite else { return Int.min / 2 }
        return Int(max(-1e9, min(1e9, value)))
    }

    /// Whether a cell lies inside the grid.
    public func contains(column: Int, row: Int) -> Bool {
        column >= 0 && column < columns && row >= 0 && row < rows
    }

    /// A scale bar: a round distance (1, 2 or 5 × 10ⁿ metres) and the columns it spans.
    public struct ScaleBar: Sendable, Equatable {
        public var metres: Double
        public var columns: Int
        /// "500 m", "2 km".
        public var label: String
    }

    /// The longest round distance whose bar fits in `maxColumns` columns (at least one column).
    public func scaleBar(maxColumns: Int) -> ScaleBar {
        var best: (metres: Double, columns: Int)?
        var magnitude = 1.0
        search: while magnitude <= 1e7 {
            for step in [1.0, 2.0, 5.0] {
                let metres = step * magnitude
                let span = Int((metres / metresPerColumn).rounded())
                if span > maxColumns { break search }
                if span >= 1 { best = (metres, span) }
            }
            magnitude *= 10
        }
        let chosen = best ?? (1, max(1, Int((1 / metresPerColumn).rounded())))
        let label = chosen.metres >= 1000 ? "\(Int(chosen.metres / 1000)) km" : "\(Int(chosen.metres)) m"
        return ScaleBar(metres: chosen.metres, columns: chosen.columns, label: label)
    }
}
