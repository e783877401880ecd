import BrokerHTTP
import Foundation
import HTTPTypes
import XCTest

/// The credential of `Authorization: Bearer`, read without Foundation's `trimmingCharacters(in:)`:
/// held to the former reading, which did use it, for every scalar of the Basic Multilingual Plane and beyond.
final class BearerCredentialTests: XCTestCase {
    /// How the credential was read before: Foundation trims it.
    private func former(_ value: String) -> String? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let credential = parts[1].trimmingCharacters(in: .whitespaces)
        return credential.isEmpty ? nil : credential
    }

    private func credential(_ value: String) -> String? {
        HTTPFields([HTTPField(name: .authorization, value: value)]).bearerCredential
    }

    /// The header's value as `HTTPFields` keeps it (it makes a control character a space).
    private func stored(_ value: String) -> String {
        HTTPFields([HTTPField(name: .authorization, value: value)])[.authorization] ?? ""
    }

    func testEveryScalarAroundATokenIsTrimmedOrKeptAsFoundationDoes() {
        var differences: [String] = []
        let scalars = (UInt32(0)...0xFFFF).compactMap(Unicode.Scalar.init) + [0x1_0000, 0x1_F600, 0xE_0020, 0x10_FFFF].compactMap(Unicode.Scalar.init)
        for scalar in scalars where scalar.value != 0 {
            let around = String(Character(scalar))
            for value in ["Bearer \(around)a.b.c\(around)", "Bearer \(around)", "Bearer \(around)\(around)x", "bearer a.b\(around)c"] {
                let (got, expected) = (credential(value), former(stored(value)))
                if got != expected { differences.append("U+\(String(scalar.value, radix: 16)) in \(value.debugDescription): \(String(describing: got)), not \(String(describing: expected))") }
            }
        }
        XCTAssertEqual(differences.count, 0, differences.prefix(10).joined(separator: "\n"))
    }

    /// Values all ASCII are read on their bytes: held to the former reading for spaces and tabs around and inside,
    /// schemes in any case and near misses, empty and spaced credentials; as `HTTPFields` keeps a value (without
    /// spaces at its ends) and as it keeps one made leniently (with them).
    func testASCIIValuesAreReadAsBefore() {
        var differences: [String] = []
        for lead in ["", " ", "  ", "\t"] {
            for scheme in ["Bearer", "bearer", "BEARER", "BeArEr", "Bearer\t", "Basic", "bearerx", "bear", "", "Bearer\u{7F}", "B@arer"] {
                for separator in [" ", "  ", "\t", " \t "] {
                    for token in ["a.b.c", "", " ", "x y", "\t", "a\tb", "\u{1}a"] {
                        for trail in ["", " ", "\t", " \t"] {
                            let value = lead + scheme + separator + token + trail
                            let (got, expected) = (credential(value), former(stored(value)))
                            if got != expected { differences.append("\(value.debugDescription): \(String(describing: got)), not \(String(describing: expected))") }
                            let lenient = HTTPFields([HTTPField(name: .authorization, lenientValue: Array(value.utf8))])
                            let (gotLenient, expectedLenient) = (lenient.bearerCredential, former(lenient[.authorization] ?? ""))
                            if gotLenient != expectedLenient {
                                differences.append("lenient \(value.debugDescription): \(String(describing: gotLenient)), not \(String(describing: expectedLenient))")
                            }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(differences.count, 0, differences.prefix(10).joined(separator: "\n"))
    }

    func testTheUsualFormsAreRead() {
        XCTAssertEqual(credential("Bearer a.b.c"), "a.b.c")
        XCTAssertEqual(credential("bearer   a.b.c \t"), "a.b.c")
        XCTAssertNil(credential("Bearer "))
        XCTAssertNil(credential("Bearer \u{200B}\u{3000}"))
        XCTAssertNil(credential("Basic a.b.c"))
        XCTAssertNil(credential("Bearer"))
    }
}
