import Foundation
import Testing

@testable import RxCrypto

/// `Base64` against Foundation's encoder as the oracle, and its strictness: one spelling only.
@Suite struct Base64Tests {
    private func foundation(_ bytes: [UInt8], url: Bool, padded: Bool) -> String {
        var text = Data(bytes).base64EncodedString()
        if url { text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") }
        return padded ? text : text.replacingOccurrences(of: "=", with: "")
    }

    @Test func encodesAsFoundationDoesAndDecodesBackForEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...70 {
            // Bytes that reach both alphabets' last two characters (62 and 63) often.
            let bytes = (0..<count).map { _ in
                UInt8.random(in: 0...255, using: &generator) | (count % 3 == 0 ? 0xFC : 0)
            }
            for (codec, url) in [(Base64.standard, false), (Base64.url, true)] {
                let text = codec.encode(bytes)
                #expect(text == foundation(bytes, url: url, padded: false))
                #expect(codec.decode(Array(text.utf8)) == bytes)
                let padded = codec.encodePadded(bytes)
                #expect(padded == foundation(bytes, url: url, padded: true))
                #expect(codec.decodePadded(Array(padded.utf8)) == bytes)
            }
        }
    }

    @Test func refusesEverySpellingButTheCanonicalOne() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0x01] // "-_-_AQ" / "+/+/AQ"
        #expect(Base64.url.encode(bytes) == "-_-_AQ")
        #expect(Base64.standard.encode(bytes) == "+/+/AQ")
        for refused in ["+/+/AQ", "-_-_AQ==", "-_-_AR", "-_-_A", "-_-_AQ\n", " -_-_AQ", "-_-_A Q", "-_-_AQ%"] {
            #expect(Base64.url.decode(Array(refused.utf8)) == nil, "\(refused)")
        }
        for refused in ["-_-_AQ", "+/+/AQ==", "+/+/AR"] {
            #expect(Base64.standard.decode(Array(refused.utf8)) == nil, "\(refused)")
        }
        for refused in ["+/+/AQ", "+/+/AQ=", "+/+/AQ===", "+/+/A=Q=", "+/+/AR==", "===="] {
            #expect(Base64.standard.decodePadded(Array(refused.utf8)) == nil, "\(refused)")
        }
        #expect(Base64.url.decode([]) == [])
        #expect(Base64.url.decode(Array("\u{FF}".utf8)) == nil)
    }
}
