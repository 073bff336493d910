import Foundation
import Testing

@testable import RxVault

/// The scanner that lets an import read one entry at a time: it must find exactly the members and
/// elements a JSON parser would, and refuse (never trap on) anything malformed.
@Suite struct JSONScannerTests {
    func scan(_ text: String) -> JSONScanner { JSONScanner(bytes: Array(text.utf8)) }

    @Test func findsMembersAndElementsAsAParserWould() throws {
        let text =
            #"  {"schema": "x", "tricky": "a \"quoted\" ]} [ string\\", "n": -1.5e3, "t": true, "list": [ {"a": [1, {"b": "}"}]}, "s", 2, null , [] ] } "#
        let scanner = scan(text)
        let members = try #require(try scanner.topLevelMembers())
        #expect(members.map(\.key) == ["schema", "tricky", "n", "t", "list"])
        #expect(scanner.object(members[1].value) as? String == #"a "quoted" ]} [ string\"#)
        #expect((scanner.object(members[2].value) as? NSNumber)?.doubleValue == -1500)
        let elements = try #require(try scanner.arrayElements(members[4].value))
        #expect(elements.count == 5)
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let expected = try #require(parsed?["list"] as? [Any])
        for (range, value) in zip(elements, expected) {
            let mine = try JSONSerialization.data(
                withJSONObject: [scanner.object(range) ?? NSNull()], options: [.sortedKeys])
            let theirs = try JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
            #expect(mine == theirs)
        }
        #expect(try scan("{}").topLevelMembers()?.isEmpty == true)
        #expect(try scanner.arrayElements(members[0].value) == nil, "a string is not an array")
    }

    @Test func refusesWhatIsNotAWholeObject() {
        #expect((try? scan("[1, 2]").topLevelMembers()) ?? nil == nil, "an array is not an object")
        for malformed in [
            #"{"a": 1"#, #"{"a": "unterminated}"#, #"{"a": 1} trailing"#, #"{"a" 1}"#, #"{"a": }"#, #"{"a": [1, 2}"#,
            #"{"a": 1,}"#, "{", #"{"\"#, #"{"a": "\"#, "{\"a\": [[[[[[", String(repeating: "{\"a\":", count: 2000)
        ] {
            #expect(throws: JSONScanner.Malformed.self, "\(malformed.prefix(40))") {
                _ = try scan(malformed).topLevelMembers()
            }
        }
    }

    @Test func neverReadsPastTheEnd() {
        // Every prefix of a valid document: each is refused or read, never a trap.
        let text =
            #"{"schema": "rxvault/export/v1", "prescriptions": [{"id": "a\\b\"c", "x": [1, 2.5, true]}, {"y": {}}]}"#
        for n in 0...text.utf8.count {
            let prefix = Array(text.utf8.prefix(n))
            let scanner = JSONScanner(bytes: prefix)
            if let members = try? scanner.topLevelMembers() {
                for member in members { _ = try? scanner.arrayElements(member.value) }
            }
        }
    }
}
