import BrokerProtocol
import XCTest

/// Identities are compared by exact bytes: NFC, ASCII letters lower-cased, nothing else folded; anything that
/// could make two different strings look or compare alike is refused, with the reason.
final class IdentityTests: XCTestCase {
    private func refusal(_ raw: String) -> String? {
        if case .failure(let why) = Identity.canonicalize(raw) { return why.description }
        return nil
    }

    func testOnlyASCIILettersAreLowerCased() {
        XCTAssertEqual(Identity.canonical("Kim@X.Org"), "kim@x.org")
        XCTAssertEqual(Identity.canonical("ÉLODIE@X.ORG"), "Élodie@x.org", "non-ASCII letters are kept as they are")
        XCTAssertEqual(Identity.canonical("José@x.org"), "jos\u{E9}@x.org")
        XCTAssertEqual(Identity.canonical("Κώστας@x.gr"), "Κώστας@x.gr", "Greek is a script of its own, kept")
        XCTAssertEqual(Identity.canonical("用户@例子.中国"), "用户@例子.中国")
    }

    func testTheKelvinSignIsNotKim() {
        XCTAssertNil(Identity.canonical("\u{212A}im@x.org"), "KELVIN SIGN would fold to k")
        XCTAssertEqual(
            refusal("\u{212A}im@x.org"),
            "it holds U+212A, a look-alike that compatibility or case mapping turns into ASCII; write the ASCII letters instead")
        for lookAlike in ["\u{FF4B}im@x.org", "\u{FB01}@x.org", "\u{017F}am@x.org", "k\u{0131}m@x.org", "stra\u{DF}e@x.org", "\u{1D424}im@x.org", "\u{24DA}im@x.org", "\u{0130}lker@x.org"] {
            XCTAssertEqual(refusal(lookAlike)?.contains("look-alike"), true, lookAlike.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
        }
    }

    func testInvisibleAndControlCharactersAreRefused() {
        let cases: [(String, String)] = [
            ("ki\u{200D}m@x.org", "U+200D"),  // zero-width joiner
            ("kim\u{200B}@x.org", "U+200B"),  // zero-width space
            ("kim@x.org\u{202E}", "U+202E"),  // right-to-left override
            ("kim\u{FE0F}@x.org", "U+FE0F"),  // variation selector: a mark, but invisible
            ("\u{3164}kim@x.org", "U+3164"),  // Hangul filler: a letter, but invisible
            ("kim\u{00A0}@x.org", "U+00A0"),  // no-break space
            ("kim\u{00AD}@x.org", "U+00AD"),  // soft hyphen
            ("kim\u{E000}@x.org", "U+E000"),  // private use
            ("kim\u{0085}@x.org", "U+0085"),  // next line, a C1 control
        ]
        for (raw, scalar) in cases {
            XCTAssertEqual(refusal(raw), "it holds the invisible or control character \(scalar)", scalar)
        }
        XCTAssertEqual(refusal("kim @x.org"), "it holds a space")
        XCTAssertEqual(refusal("kim\t@x.org"), "it holds the control character U+0009")
        XCTAssertEqual(refusal(""), "it is empty")
        XCTAssertEqual(refusal(String(repeating: "a", count: 255)), "it is longer than 254 bytes")
    }

    func testAnIdentityMustBeInNFC() {
        let decomposed = "Jose\u{0301}@x.org"
        XCTAssertEqual(refusal(decomposed), "it is not in Unicode normalization form C (NFC); send the composed form of each accented letter")
        XCTAssertEqual(Identity.canonical("Jos\u{E9}@x.org"), "jos\u{E9}@x.org")
        // Swift's == calls them equal; the broker never does, because it never accepts the decomposed one.
        XCTAssertEqual(decomposed, "Jos\u{E9}@x.org")
    }

    /// Found by the donation fuzzer (`"donor":"02H\u{331}-FO>"`): `H` + COMBINING MACRON BELOW is NFC (there is no
    /// capital H with line below), but lower-cased it is `h` + U+0331, which composes into U+1E96: the canonical form
    /// was not in NFC, so it was refused when sent back, and Swift's `==` called it equal to another string.
    func testAnIdentityWhoseLowerCasedLetterWouldComposeWithTheMarkAfterItIsRefused() {
        XCTAssertEqual(
            refusal("02H\u{331}-fo@x.org"),
            "once its ASCII letters are lower-cased it is not in Unicode normalization form C (NFC): a letter and the combining mark after it would make one character")
    }

    /// The canonical form is what the broker stores and sends back: it must be accepted again, unchanged, whatever
    /// upper-case ASCII letter stands before whatever combining mark.
    func testTheCanonicalFormIsAcceptedAgainUnchanged() {
        var accepted = 0
        for letter in UInt8(ascii: "A")...UInt8(ascii: "Z") {
            for mark in 0x300...0x36F {
                let raw = "x" + String(UnicodeScalar(letter)) + String(UnicodeScalar(UInt32(mark))!) + "@x.org"
                guard case .success(let canonical) = Identity.canonicalize(raw) else { continue }
                accepted += 1
                XCTAssertEqual(try? Identity.canonicalize(canonical).get(), canonical, raw.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
            }
        }
        XCTAssertGreaterThan(accepted, 0, "no identity of this form is accepted at all: the test checks nothing")
    }

    func testDonationIdentitiesGoThroughTheSameRules() {
        let home = Home(lat: -34.6, lon: -58.4)
        func message(donor: String, volunteer: String? = nil) -> String? {
            if case .failure(let error) = DonationUpdate(donor: donor, volunteer: volunteer, state: .created, home: home, institution: nil).validated() {
                return error.message
            }
            return nil
        }
        XCTAssertEqual(
            message(donor: "\u{212A}im@x.org"),
            "donor is not a usable identity: it holds U+212A, a look-alike that compatibility or case mapping turns into ASCII; write the ASCII letters instead")
        XCTAssertEqual(
            message(donor: "kim@x.org", volunteer: "v\u{200D}@x.org"),
            "volunteer must be null or a usable identity: it holds the invisible or control character U+200D")
        XCTAssertEqual(
            try? DonationUpdate(donor: "KIM@x.org", volunteer: nil, state: .created, home: home, institution: nil).validated().get().donor,
            Identity.canonical("kim@X.ORG"), "a donor and a token of the same person have the same canonical form")
    }
}
