import BrokerProtocol
import Foundation
import JWTKit
import XCTest

@testable import BrokerAuth

/// The JOSE reader against the JSONDecoder path it replaced (JOSEReaderOracle): every signed token, hostile
/// or generated, gets the same decision, the same identity and the same refusal message, and the same routing
/// (watch link or client token); where they differ, the input is not JSON or repeats a name, and the reader refuses.
final class JOSEReaderDifferentialTests: XCTestCase {
    static let secret = "differential-secret-0123456789abcdef"
    static let now: Int64 = 1_800_000_000
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    /// What the reader must do with an input.
    enum Expect {
        /// Exactly what the oracle does.
        case same
        /// The input is not JSON (RFC 8259) or names a member twice: the reader refuses it, whatever the oracle does.
        case stricter
    }

    /// A verifier's rules and their oracle.
    struct Subject {
        let name: String
        let verifier: TokenVerifier
        let oracle: JOSEReaderOracle
    }

    private var subjects: [Subject] = []
    private var signer: (any JWTAlgorithm)!

    override func setUp() async throws {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(Self.secret.utf8)), digestAlgorithm: .sha256)
        signer = try await keys.getKey()
        subjects = []
        for (name, claim, audience, issuer) in [("sub, aud ponte", "sub", "ponte", nil), ("email verified, iss", "email", nil, "https://issuer.example")] {
            let rules = TokenVerifier.Rules(secret: Self.secret, identityClaim: claim, audience: audience, issuer: issuer)
            subjects.append(
                Subject(
                    name: name, verifier: try await TokenVerifier(rules: rules),
                    oracle: JOSEReaderOracle(
                        hmac: signer, identityClaim: claim, requireEmailVerified: rules.requireEmailVerified, audience: audience, issuer: issuer)))
        }
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A token with exactly these header and claims bytes, signed with the test secret.
    private func token(header: [UInt8], claims: [UInt8]) throws -> String {
        let input = Self.base64URL(header) + "." + Self.base64URL(claims)
        return input + "." + Self.base64URL(try signer.sign(Array(input.utf8)))
    }

    /// Checks one token on every subject; returns how many subjects accepted it (to show the cases reach acceptance).
    @discardableResult
    private func check(header: [UInt8], claims: [UInt8], _ expect: Expect, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let token = try token(header: header, claims: claims)
        var accepted = 0
        for subject in subjects {
            let mine = subject.verifier.verify(token, now: Self.now)
            let theirs = subject.oracle.verify(token, now: Self.now)
            if case .success = mine { accepted += 1 }
            switch expect {
            case .same:
                XCTAssertEqual(mine, theirs, "\(name) [\(subject.name)]", file: file, line: line)
                XCTAssertEqual(JOSEToken(token).isWatchLink, JOSEReaderOracle.isMarked(token), "\(name): routing", file: file, line: line)
            case .stricter:
                guard case .failure(let refusal) = mine else {
                    XCTFail("\(name) [\(subject.name)]: accepted input that is not JSON or repeats a name", file: file, line: line)
                    continue
                }
                XCTAssertTrue(
                    ["the token is not a well-formed JWT", TokenVerifier.repeatedName].contains(refusal.message),
                    "\(name) [\(subject.name)]: \(refusal.message)", file: file, line: line)
            }
        }
        if expect == .same {
            // Value by value: every string and boolean claim, exp, nbf, iss and aud, or the same refusal.
            let mine: Result<JOSEReaderOracle.Claims, BrokerError>
            switch JOSEObjectReader.read(Data(claims)) {
            case .failure: mine = .failure(BrokerError(.unauthorized, "the token is not a well-formed JWT"))
            case .success(let members):
                do {
                    mine = .success(JOSEReaderOracle.Claims(try TokenClaims(members: members)))
                } catch let error as JWTError {
                    mine = .failure(BrokerError(.unauthorized, "the token's claims are not valid: \(error.reason ?? "bad claim")"))
                }
            }
            XCTAssertEqual(mine, JOSEReaderOracle.claims(Data(claims)), "\(name): claims", file: file, line: line)
        }
        return accepted
    }

    private func check(header: String = header, _ claims: String, _ expect: Expect, file: StaticString = #filePath, line: UInt = #line) throws {
        try check(header: Array(header.utf8), claims: Array(claims.utf8), expect, claims, file: file, line: line)
    }

    // MARK: Hand-written hostile cases

    func testEscapesAndUnicodeComeOutAsTheOracleReadsThem() throws {
        let tail = #","exp":1800003600,"aud":"ponte","email_verified":true,"iss":"https://issuer.example"}"#
        for identity in [
            #"donor@example.org"#, #"\u0044onor@example.org"#, #"D\u00d6NOR@example.org"#, #"dönor@example.org"#, #"do\u0308nor@example.org"#,
            #"d\ud83d\ude00@example.org"#, #"d\uD83D\uDE00@example.org"#, #"d\ud800@example.org"#, #"d\udc00x@example.org"#, #"d\ud83d\u0041@example.org"#,
            #"d\ud83d\n@example.org"#, #"\u0000donor@example.org"#, #"donor\/x@example.org"#, #"don\"or@example.org"#, #"don\\or@example.org"#,
            #"do nor@example.org"#, #"\t@example.org"#, #"\b\f\r"#, "",
        ] {
            try check(#"{"sub":"\#(identity)","email":"\#(identity)""# + tail, .same)
        }
        // Member names are strings too: escaped names are the same names; an unpaired surrogate in a name is refused by both.
        try check(#"{"s\u0075b":"donor@example.org","\u0065mail":"donor@example.org""# + tail, .same)
        try check(#"{"\ud800":"x","sub":"donor@example.org""# + tail, .same)
        try check(#"{"":"x","\/":"y","sub":"donor@example.org""# + tail, .same)
        // A watch link's claims in a client token.
        try check(#"{"typ":"lb-watch","sub":"donor@example.org""# + tail, .same)
        try check(#"{"typ":"lb-w\u0061tch","sub":"donor@example.org""# + tail, .same)
    }

    func testTimeClaimsInEveryNumberForm() throws {
        let head = #"{"sub":"donor@example.org","email":"donor@example.org","aud":"ponte","email_verified":true,"iss":"https://issuer.example","#
        for exp in [
            "1800003600", "1800003600.9", "1.8000036e9", "1.8000036E+9", "18000036000e-1", "1800003600e0", "0.18000036e10", "-1", "0", "-0", "-0.0",
            "999999999999999", "-999999999999999", "1e15", "1E15", "1e400", "-1e400", "1e-400", "2.5e-324", "4.9e-324", "1e308", "1.7976931348623157e308",
            "0.000000000000000000000001e-300", "0e-400", "0.0e999", "0e1", "0E1", "0e6", "0e0", "0e10", "0e+1", "-0e1", "-0.0e1", "-0.0e-0",
            "0.00e+1", "0.000e6", "0.000E+9", "0.000e10", "0.00e00", "-0.0e10", String(repeating: "9", count: 400), "1" + String(repeating: "0", count: 400),
            "0." + String(repeating: "9", count: 400), #""1800003600""#, "null", "true", "false", "[]", "[1800003600]", "{}", #"{"a":1}"#,
        ] {
            try check(head + #""exp":\#(exp)}"#, .same)
            try check(head + #""exp":1800003600,"nbf":\#(exp)}"#, .same)
        }
        try check(#"{"sub":"donor@example.org","aud":"ponte"}"#, .same)
    }

    func testAudienceBooleansAndNestedJunk() throws {
        let head = #"{"sub":"donor@example.org","email":"donor@example.org","exp":1800003600,"iss":"https://issuer.example","#
        for aud in [
            #""ponte""#, #"["ponte"]"#, #"["x","ponte"]"#, "[]", #"["ponte",1]"#, #"[["ponte"]]"#, "null", #"{"a":"ponte"}"#, #"["ponte","\ud800"]"#,
            #"[ "ponte" , "p\u006fnte" ]"#, #""p\u006fnte""#, "true", "7",
        ] {
            for verified in ["true", "false", #""true""#, "1", "null", "[true]"] {
                try check(head + #""aud":\#(aud),"email_verified":\#(verified)}"#, .same)
            }
        }
        let junk = [
            #"{"x":{"a":[1,{"b":"\"]}"}],"c":null},"y":[[[[]]]],"z":[{},{"":{}}]}"#, #"{"x":-0.5e-3,"y":1E+2,"z":[true,false,null]}"#,
            #"{"x":"\u00e9\u00E9\ud83d\ude00","y":["\ud800"],"z":{"\u0041":"\ud800"}}"#,
        ]
        for extra in junk {
            try check(#"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","email":"donor@example.org","email_verified":true,"iss":"https://issuer.example","junk":\#(extra)}"#, .same)
        }
        // Nesting: JSONDecoder takes 512 levels, the top-level object included, and refuses 513; so does the reader.
        for levels in [510, 511, 512, 600] {
            let nested = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
            try check(#"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","deep":\#(nested)}"#, .same)
            let objects = String(repeating: #"{"a":"#, count: levels) + "1" + String(repeating: "}", count: levels)
            try check(#"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","deep":\#(objects)}"#, .same)
        }
    }

    func testWhitespaceTrailingBytesAndWrongShapes() throws {
        let claims = #"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte"}"#
        try check(" \t\r\n{ \"sub\" :\t\"donor@example.org\" ,\n\"exp\"\r:1800003600 , \"aud\" : [ \"ponte\" ] }\n\t ", .same)
        for wrong in [claims + " x", claims + "{}", claims + "}", "[" + claims + "]", #""x""#, "", " ", "null", "1", "{", #"{"sub""#, #"{"sub":}"#,
            #"{"sub" "donor@example.org"}"#, #"{"sub":"donor@example.org" "exp":1}"#, "{,}", #"{,"sub":"x"}"#, #"{"a":1,,"b":2}"#, "{'a':1}", "{a:1}",
            "{/*c*/}", #"{"a":+1}"#, #"{"a":.5}"#, #"{"a":0x10}"#, #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":tru}"#, #"{"a":True}"#, #"{"a":"\u12"}"#,
            "{\u{0B}\"a\":1}", "{\u{A0}\"a\":1}",
        ] {
            try check(wrong, .same)
        }
    }

    func testInputThatIsNotJSONIsRefused() throws {
        let good = #""sub":"donor@example.org","exp":1800003600,"aud":"ponte""#
        for text in [
            #"{\#(good),}"#, #"{\#(good),"x":[1,]}"#, #"{\#(good),"x":01}"#, #"{\#(good),"x":-01}"#, #"{\#(good),"x":1.}"#, #"{\#(good),"x":-}"#,
            #"{\#(good),"x":1e}"#, #"{\#(good),"x":[1.]}"#, #"{\#(good),"x":"\x"}"#, #"{\#(good),"x":{"y":"\q"}}"#, "{\(good),\"x\":\"a\tb\"}",
            "{\(good),\"x\":\"a\u{0}b\"}", #"{"sub":"donor@example.org","exp":01,"aud":"ponte"}"#, #"{\#(good),"x":"\ud83d\uZZZZ"}"#,
        ] {
            try check(text, .stricter)
        }
        let bytes = Array("{\(good),\"x\":\"".utf8)
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]] {
            try check(header: Array(Self.header.utf8), claims: bytes + bad + Array("\"}".utf8), .stricter, "invalid UTF-8 \(bad)")
        }
        // A byte-order mark, and UTF-16 (JSONDecoder guesses the encoding; a JWT is UTF-8).
        try check(header: Array(Self.header.utf8), claims: [0xEF, 0xBB, 0xBF] + Array("{\(good)}".utf8), .stricter, "BOM")
        try check(header: Array(Self.header.utf8), claims: Array("{\(good)}".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, .stricter, "UTF-16LE")
        try check(header: [0xEF, 0xBB, 0xBF] + Array(Self.header.utf8), claims: Array("{\(good)}".utf8), .stricter, "BOM in the header")
    }

    func testARepeatedNameIsRefusedWhereJSONDecoderKeptTheFirst() throws {
        for text in [
            #"{"sub":"donor@example.org","sub":"attacker@example.org","exp":1800003600,"aud":"ponte"}"#,
            #"{"sub":"donor@example.org","exp":1800003600,"exp":1,"aud":"ponte"}"#,
            #"{"sub":"donor@example.org","exp":1800003600,"aud":"someone-else","aud":"ponte"}"#,
            #"{"sub":"donor@example.org","s\u0075b":"attacker@example.org","exp":1800003600,"aud":"ponte"}"#,
            // Canonically equivalent names are one name to Swift's String (and so to JSONDecoder's dictionary).
            #"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","\u00e9":1,"e\u0301":2}"#,
            #"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","typ":"JWT","typ":"lb-watch"}"#,
        ] {
            try check(text, .stricter)
        }
        let claims = #"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte"}"#
        try check(header: #"{"alg":"HS256","alg":"none"}"#, claims, .stricter)
        try check(header: #"{"alg":"HS256","typ":"lb-watch+jwt","typ":"JWT"}"#, claims, .stricter)
    }

    func testHeadersAsTheOracleReadsThem() throws {
        let claims = #"{"sub":"donor@example.org","exp":1800003600,"aud":"ponte","email":"donor@example.org","email_verified":true,"iss":"https://issuer.example"}"#
        for header in [
            #"{"alg":"HS256"}"#, #"{"alg":"HS\u0032\u00356","typ":"JWT"}"#, #"{"alg":"HS256","kid":null}"#, #"{"alg":"HS256","kid":"k1"}"#,
            #"{"alg":"HS256","kid":7}"#, #"{"alg":7}"#, #"{"alg":null}"#, #"{"alg":"\ud800"}"#, #"{"alg":"HS256","kid":"\ud800"}"#, #"{"alg":"none"}"#,
            #"{"alg":"RS256","kid":"k"}"#, #"{"alg":"ES256"}"#, #"{"alg":"hs256"}"#, #"{"alg":"HS256","typ":7}"#, #"{"alg":"HS256","typ":"lb-watch+jwt"}"#,
            #"{"alg":"HS256","typ":"lb-w\u0061tch+jwt"}"#, #"{"alg":"HS256","typ":null}"#, #"{"alg":"HS256","jwk":{"kty":"oct","k":[1,{"a":null}]}}"#,
            #"{"alg":["HS256"]}"#, "{}", "[]", "", " {\"alg\" : \"HS256\" } ", #"{"alg":"HS256"} x"#,
        ] {
            try check(header: header, claims, .same)
        }
    }

    func testRoutingReadsTheHeaderOnceAndAsBefore() throws {
        let claims = Self.base64URL(Array(#"{"sub":"donor@example.org","exp":1800003600}"#.utf8))
        let marked = #"{"alg":"HS256","typ":"lb-watch+jwt"}"#
        let markedURL = Self.base64URL(Array(marked.utf8))
        let plain = Data(marked.utf8).base64EncodedString()  // padded: "=" (and "+" or "/" where base64url differs)
        let long = Self.base64URL(Array((#"{"alg":"HS256","typ":"lb-watch+jwt","x":""# + String(repeating: "a", count: 800) + #""}"#).utf8))
        var tokens = [
            markedURL + "." + claims + ".c2ln", plain + "." + claims + ".c2ln", markedURL, markedURL + ".", markedURL + "." + claims,
            markedURL + "." + claims + ".c2ln.x", markedURL + "." + claims + ".!!", long + "." + claims + ".c2ln", "." + claims + ".c2ln", "", ".",
            markedURL + "." + claims + "." + String(repeating: "A", count: 9000), Self.base64URL(Array(#"{"typ":"JWT","typ":"lb-watch+jwt"}"#.utf8)) + ".e30.c2ln",
            Self.base64URL(Array(#"{"typ":7}"#.utf8)) + ".e30.c2ln",
        ]
        tokens.append(try token(header: Array(marked.utf8), claims: Array(#"{"sub":"donor@example.org","exp":1800003600}"#.utf8)))
        for token in tokens {
            XCTAssertEqual(JOSEToken(token).isWatchLink, JOSEReaderOracle.isMarked(token), token.prefix(80) + "")
        }
        // A header that repeats `typ` was routed by its first `typ`; now it is refused, so it goes to the client-token
        // verifier, which refuses it.
        let repeated = Self.base64URL(Array(#"{"alg":"HS256","typ":"lb-watch+jwt","typ":"JWT"}"#.utf8)) + "." + claims + ".c2ln"
        XCTAssertTrue(JOSEReaderOracle.isMarked(repeated))
        XCTAssertFalse(JOSEToken(repeated).isWatchLink)
        XCTAssertEqual(subjects[0].verifier.verify(repeated), .failure(BrokerError(.unauthorized, TokenVerifier.repeatedName)))
        // The verifier takes the token the routing read: one split, one header read per upgrade.
        let jose = JOSEToken(tokens.last!)
        XCTAssertTrue(jose.isWatchLink)
        XCTAssertEqual(subjects[0].verifier.verify(jose, now: Self.now), subjects[0].oracle.verify(tokens.last!, now: Self.now))
    }

    // MARK: Generated tokens

    /// SplitMix64: the same sequence on every run, so a failure names its seed and index.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Writes random JSON objects shaped like claims sets, remembering whether it repeated a name or wrote something
    /// that is not JSON.
    struct ClaimsWriter {
        var random: SeededGenerator
        var repeated = false
        var invalid = false
        let mayBreak: Bool

        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &random)! }

        mutating func space() -> String { chance(70) ? "" : pick([" ", "\t", "\n", "\r\n", "  "]) }

        /// A string literal's body: plain text, raw UTF-8, every escape, now and then an unpaired surrogate or control.
        mutating func text(_ base: String) -> String {
            var out = ""
            for character in base {
                switch Int.random(in: 0..<10, using: &random) {
                case 0: out += character.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
                case 1: out += character.unicodeScalars.map { String(format: "\\u%04X", $0.value) }.joined()
                default: out.append(character)
                }
            }
            if chance(8) { out += pick(["\\n", "\\\"", "\\\\", "\\/", "\\b\\f\\r\\t", "é", "😀", "\\ud83d\\ude00", "e\\u0301", "\\u0000", "ǅ"]) }
            if chance(3) { out += pick(["\\ud800", "\\udfff", "\\ud83d\\u0041"]) }
            if mayBreak, chance(1) {
                invalid = true
                out += pick(["\t", "\u{1}", "\\x", "\\u12G4"])
            }
            return out
        }

        mutating func number() -> String {
            var out = chance(20) ? "-" : ""
            out += chance(15) ? "0" : String(Int.random(in: 1...9, using: &random)) + String((0..<Int.random(in: 0...18, using: &random)).map { _ in pick(Array("0123456789")) })
            if chance(30) { out += "." + String((0..<Int.random(in: 1...6, using: &random)).map { _ in pick(Array("0123456789")) }) }
            if chance(30) { out += pick(["e", "E"]) + pick(["", "+", "-"]) + String(Int.random(in: 0...400, using: &random)) }
            if mayBreak, chance(1) {
                invalid = true
                out = pick(["01", "1.", "-", "1e", ".5", "+1"])
            }
            return out
        }

        /// A time claim: mostly a valid time around `now` in some number form.
        mutating func seconds(around now: Int64) -> String {
            let value = now + Int64.random(in: -7200...7200, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0: return "\(value).\(Int.random(in: 0...999, using: &random))"
            case 1: return "\(Double(value) / 1e9)e9"
            case 2: return "\(value)0E-1"
            case 3: return number()
            case 4: return pick(["null", "true", "\"\(value)\"", "[\(value)]", "1e400", "1e-400"])
            default: return "\(value)"
            }
        }

        mutating func value(depth: Int) -> String {
            let kind = Int.random(in: 0..<9, using: &random)
            if kind < 2 { return "\"" + text(pick(["donor@example.org", "ponte", "x", "", "Ünïcode", "a b"])) + "\"" }
            if kind == 2 { return number() }
            if kind == 3 { return pick(["true", "false", "null"]) }
            if depth >= 6 { return "\"" + text("v") + "\"" }
            if kind < 6 {
                let count = Int.random(in: 0...3, using: &random)
                let trailing = mayBreak && count > 0 && chance(2)
                if trailing { invalid = true }
                return "[" + space() + (0..<count).map { _ in value(depth: depth + 1) }.joined(separator: space() + "," + space()) + (trailing ? "," : "") + "]"
            }
            return object(depth: depth + 1, names: ["a", "b", "sub", "exp", "\\u0061"])
        }

        mutating func object(depth: Int, names: [String]) -> String {
            // Nested objects may repeat names: neither JSONDecoder nor the reader reads nested members.
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let name = pick(names)
                members.append("\"" + name + "\"" + space() + ":" + space() + value(depth: depth))
            }
            return "{" + space() + members.joined(separator: space() + "," + space()) + space() + "}"
        }

        /// A generated name as JSON decodes it (names only use `\u0061`-style escapes of ASCII).
        func decodedName(_ name: String) -> String {
            name.replacingOccurrences(of: "\\u0061", with: "a").replacingOccurrences(of: "\\u0075", with: "u").replacingOccurrences(of: "\\u0065", with: "e")
        }

        mutating func claims(now: Int64) -> String {
            var members: [(String, String)] = []
            if chance(90) { members.append((pick(["sub", "s\\u0075b"]), "\"" + text(pick(["donor@example.org", "Donor@Example.org", "volunteer@example.org", "x y"])) + "\"")) }
            if chance(60) { members.append((pick(["email", "\\u0065mail"]), "\"" + text("donor@example.org") + "\"")) }
            if chance(90) { members.append(("exp", seconds(around: now + 3600))) }
            if chance(30) { members.append(("nbf", seconds(around: now - 3600))) }
            if chance(85) {
                members.append(("aud", pick(["\"ponte\"", "[\"ponte\"]", "[\"x\",\"ponte\"]", "[]", "[\"ponte\",1]", "\"p\\u006fnte\"", "null", "[\"ponte\",\"\\ud800\"]"])))
            }
            if chance(70) { members.append(("email_verified", pick(["true", "true", "false", "\"true\"", "1", "null"]))) }
            if chance(60) { members.append(("iss", pick(["\"https://issuer.example\"", "\"https:\\/\\/issuer.example\"", "\"other\"", "7"]))) }
            if chance(5) { members.append(("typ", pick(["\"lb-watch\"", "\"JWT\"", "\"lb-w\\u0061tch\""]))) }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members.append((pick(["x", "y", "name", "picture", "firebase", "auth_time", "\\u00e9", "e\\u0301", "", "\\ud83d\\ude00"]), value(depth: 1)))
            }
            members.shuffle(using: &random)
            if chance(10), let twin = members.randomElement(using: &random) {
                members.insert((twin.0, value(depth: 1)), at: Int.random(in: 0...members.count, using: &random))
            }
            var names = Set<String>()
            for (name, _) in members {
                // "é" and "e\u0301" are one name to Swift's String, as to JSONDecoder.
                let decoded = decodedName(name).replacingOccurrences(of: "\\u00e9", with: "é").replacingOccurrences(of: "e\\u0301", with: "é")
                    .replacingOccurrences(of: "\\ud83d\\ude00", with: "😀")
                if !names.insert(decoded).inserted { repeated = true }
            }
            let trailing = mayBreak && chance(2) && !members.isEmpty
            if trailing { invalid = true }
            return space() + "{" + space() + members.map { "\"\($0.0)\"" + space() + ":" + space() + $0.1 }.joined(separator: space() + "," + space())
                + (trailing ? "," : "") + space() + "}" + space()
        }
    }

    func testGeneratedClaimsAgreeWithTheOracle() throws {
        var accepted = 0
        var refusedAsStricter = 0
        let seed: UInt64 = UInt64(ProcessInfo.processInfo.environment["JOSE_SEED"] ?? "") ?? 17_2026
        var writer = ClaimsWriter(random: SeededGenerator(state: seed), mayBreak: true)
        for index in 0..<(ProcessInfo.processInfo.environment["JOSE_SEED"] == nil ? 4_000 : 30_000) {
            writer.repeated = false
            writer.invalid = false
            let claims = writer.claims(now: Self.now)
            let header = writer.chance(85) ? Self.header : writer.pick([
                #"{"typ":"JWT","alg":"HS256"}"#, #"{"alg":"HS\u0032\u00356","kid":null}"#, #"{"alg":"HS256","typ":"lb-watch+jwt"}"#,
                #"{ "alg" : "HS256" , "x5c" : [ "a" , { } ] }"#, #"{"alg":"HS256","kid":1}"#, #"{"alg":"HS256","alg":"HS256"}"#,
            ])
            let headerRepeats = header.contains(#""alg":"HS256","alg""#)
            let expect: Expect = writer.repeated || writer.invalid || headerRepeats ? .stricter : .same
            if expect == .stricter { refusedAsStricter += 1 }
            accepted += try check(header: Array(header.utf8), claims: Array(claims.utf8), expect, "seed \(seed) #\(index): \(header) \(claims)")
        }
        // The generator must reach both outcomes, or it tests little.
        print("JOSEReaderDifferentialTests: \(accepted) accepted, \(refusedAsStricter) refused as not JSON or repeated")
        XCTAssertGreaterThan(accepted, 250, "generated tokens accepted")
        XCTAssertGreaterThan(refusedAsStricter, 150, "generated tokens only the reader refuses")
    }
}
