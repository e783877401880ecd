import XCTest
final class WatchPlaceholderTests: XCTestCase { func testNothingYet() {} }
