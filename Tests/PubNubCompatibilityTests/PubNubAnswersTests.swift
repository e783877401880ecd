import Foundation
import XCTest

@testable import PubNubCompatibility

/// PubNub's answers are written out by hand: whatever a channel or key holds, they stay valid JSON and say it back.
final class PubNubAnswersTests: XCTestCase {
    func testAQuotedStringReadsBackAsItselfWhateverItHolds() throws {
        let texts = [
            "vol@example.org", "", #"a"quote"#, #"back\slash"#, "line\nbreak", "tab\tand\rreturn", "bell\u{07}nul\u{00}unit\u{1F}",
            "ñandú 🚚 ﻿", "</script>", "\u{7F}del",
        ]
        for text in texts {
            let json = "[" + PubNubAnswers.quoted(text) + "]"
            let read = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String], json)
            XCTAssertEqual(read, [text], json)
        }
    }
}
