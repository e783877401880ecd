import XCTest
final class SimulatorPlaceholderTests: XCTestCase { func testNothingYet() {} }
