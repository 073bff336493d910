/// HTML that acts, wherever a browser could meet it in a stored file: a PDF's header comment, a
/// string or an uncompressed stream, a PNG's text chunk. A file opened or served as HTML (a
/// download saved as .html, a host that sniffs) runs or loads what this finds; a prescription's
/// scan has none of it. Refused by what the markup does, not by a list of sample tags:
///
/// - in the first 1445 bytes, where the WHATWG MIME Sniffing standard looks (its "resource
///   header"), any of the standard's HTML signatures (`<html`, `<body`, `<a `, `<!--`, ...); in a
///   PDF only before its first object (the header and its comments), since Acrobat's form
///   values are XHTML strings that may sit in an early object;
/// - anywhere, read as the HTML tokenizer reads (tags, attributes, comments): an element that
///   runs script or loads another document (`script`, `iframe`, `object`, `embed`, `svg`, ...),
///   an event-handler attribute (`onerror=`, `onload=`, any `on...=`), a `meta http-equiv`
///   (refresh, cookies), and a `javascript:`, `vbscript:` or `data:text/html` URL.
///
/// Markup that does nothing by itself stays accepted: Acrobat writes form values as XHTML
/// (`<body xmlns=...><p>...</p></body>`), and XFA forms and XMP metadata are XML.
public enum ActiveMarkup {
    public struct Found: Equatable, Sendable, CustomStringConvertible {
        /// What was found, as it reads in a message: "<img onerror=...>", "<script>".
        public let what: String
        public let offset: Int
        /// Found by the sniffing rule (an HTML page's start near the top), not by what it does.
        public var sniffed = false
        public var description: String {
            sniffed
                ? "\(what) at byte \(offset), which makes a browser that sniffs take the file for an HTML page"
                : "\(what) markup at byte \(offset), which a browser acts on"
        }
    }

    /// WHATWG MIME Sniffing, 7.1 "Identifying a resource with an unknown MIME type": the HTML
    /// patterns, each followed by a space or `>`.
    static let sniffedSignatures = [
        "<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table", "<a", "<style",
        "<title", "<b", "<body", "<br", "<p", "<!--"
    ].map { Array($0.utf8) }
    public static let resourceHeaderLength = 1445

    /// Elements that run script, load or embed another document, or change where every link on
    /// the page goes.
    static let actingElements: Set<String> = [
        "script", "iframe", "frame", "frameset", "object", "embed", "applet", "portal", "base", "link", "svg", "math",
        "noembed"
    ]

    /// `sniffedLength`: how much of the start the sniffing rule reads (at most 1445 bytes).
    public static func find(in bytes: [UInt8], sniffedLength: Int = resourceHeaderLength) -> Found? {
        bytes.withUnsafeBufferPointer { buffer in
            sniffed(buffer, within: min(sniffedLength, resourceHeaderLength, buffer.count)) ?? tokenized(buffer)
        }
    }

    /// A PDF's bytes before its first "obj" keyword: the header and the comments after it.
    public static func pdfHeaderLength(_ bytes: [UInt8]) -> Int {
        let limit = min(bytes.count, resourceHeaderLength)
        var i = 1
        while i + 3 <= limit {
            if bytes[i] == 0x6F && bytes[i + 1] == 0x62 && bytes[i + 2] == 0x6A && isSpace(bytes[i - 1]) { return i }
            i += 1
        }
        return limit
    }

    static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }
    static func isAlpha(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(lower(byte)) }
    static func isHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(lower(byte)) }

    /// A WHATWG HTML signature in the resource header, other than a PDF hex string (`<a0 b1>`):
    /// a browser sniffing the start of the file would take it for a page.
    static func sniffed(_ buffer: UnsafeBufferPointer<UInt8>, within length: Int) -> Found? {
        for i in 0..<length where buffer[i] == 0x3C {
            for signature in sniffedSignatures where i + signature.count < buffer.count {
                guard (0..<signature.count).allSatisfy({ lower(buffer[i + $0]) == signature[$0] }) else { continue }
                let next = buffer[i + signature.count]
                guard next == 0x20 || next == 0x3E else { continue }
                if isHexString(buffer, from: i) { continue }
                return Found(what: "\(String(decoding: signature, as: UTF8.self))>", offset: i, sniffed: true)
            }
        }
        return nil
    }

    /// `<` then only hex digits and white space up to `>`: a PDF hex string.
    static func isHexString(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var j = start + 1
        while j < buffer.count, buffer[j] != 0x3E {
            if !isHex(buffer[j]) && !isSpace(buffer[j]) { return false }
            j += 1
        }
        return j < buffer.count
    }

    /// The HTML tokenizer's data, tag, attribute and comment states (HTML Living Standard,
    /// 13.2.5), enough to see every start tag and attribute a browser would build.
    static func tokenized(_ buffer: UnsafeBufferPointer<UInt8>) -> Found? {
        let n = buffer.count
        var i = 0
        /// Just past the next ">" from `start` (the end of the buffer when there is none).
        func pastNextClose(from start: Int) -> Int {
            var j = start
            while j < n, buffer[j] != 0x3E { j += 1 }
            return min(j + 1, n)
        }
        while i < n {
            guard buffer[i] == 0x3C, i + 1 < n else {
                i += 1
                continue
            }
            let tagStart = i
            let next = buffer[i + 1]
            if next == 0x21 || next == 0x3F {
                // "<!" and "<?": a comment or declaration, skipped only to the next ">". A
                // browser skips a "<!--" comment further (to "-->" or "--!>"): seeing what it
                // would skip only refuses more, never less.
                i = pastNextClose(from: i + 2)
                continue
            }
            let endTag = next == 0x2F
            let nameStart = endTag ? i + 2 : i + 1
            guard nameStart < n, isAlpha(buffer[nameStart]) else {
                i += 1
                continue
            }
            var j = nameStart
            var name: [UInt8] = []
            while j < n, !isSpace(buffer[j]), buffer[j] != 0x2F, buffer[j] != 0x3E {
                if name.count < 16 { name.append(lower(buffer[j])) }
                j += 1
            }
            let element = String(decoding: name, as: UTF8.self)
            if !endTag && actingElements.contains(element) {
                return Found(what: "<\(element)>", offset: tagStart)
            }
            // Attributes, to the tag's ">".
            while j < n, buffer[j] != 0x3E {
                if isSpace(buffer[j]) || buffer[j] == 0x2F {
                    j += 1
                    continue
                }
                let attributeStart = j
                var attribute: [UInt8] = [lower(buffer[j])]
                j += 1
                while j < n, !isSpace(buffer[j]), buffer[j] != 0x2F, buffer[j] != 0x3E, buffer[j] != 0x3D {
                    if attribute.count < 32 { attribute.append(lower(buffer[j])) }
                    j += 1
                }
                while j < n, isSpace(buffer[j]) { j += 1 }
                guard j < n, buffer[j] == 0x3D else { continue }
                j += 1
                while j < n, isSpace(buffer[j]) { j += 1 }
                var raw: [UInt8] = []
                if j < n, buffer[j] == 0x22 || buffer[j] == 0x27 {
                    let quote = buffer[j]
                    j += 1
                    while j < n, buffer[j] != quote {
                        if raw.count < 512 { raw.append(buffer[j]) }
                        j += 1
                    }
                    j += 1
                } else {
                    while j < n, !isSpace(buffer[j]), buffer[j] != 0x3E {
                        if raw.count < 512 { raw.append(buffer[j]) }
                        j += 1
                    }
                }
                if endTag { continue }
                if let acting = actingAttribute(attribute, value: decodedURL(raw)) {
                    return Found(what: "<\(element) \(acting)>", offset: attributeStart)
                }
            }
            i = j + 1
        }
        return nil
    }

    /// "onerror=...", "http-equiv=...", "href=javascript:..." as the message shows it, or nil.
    static func actingAttribute(_ name: [UInt8], value: [UInt8]) -> String? {
        let text = String(decoding: name, as: UTF8.self)
        if name.count >= 4, name.starts(with: Array("on".utf8)), name.dropFirst(2).allSatisfy(isAlpha) {
            return "\(text)=..."
        }
        if text == "http-equiv" || text == "srcdoc" { return "\(text)=..." }
        for scheme in ["javascript:", "vbscript:", "data:text/html"] where value.starts(with: Array(scheme.utf8)) {
            return "\(text)=\(scheme)..."
        }
        return nil
    }

    /// An attribute value as a URL parser gets it, lowercased: character references decoded
    /// (`&#106;`, `&#x6A;`, `&colon;`, `&Tab;`, `&NewLine;`), leading C0 controls and spaces
    /// dropped, tabs and newlines dropped anywhere (URL Standard, basic URL parser).
    static func decodedURL(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var k = 0
        func append(_ byte: UInt8) {
            if byte == 0x09 || byte == 0x0A || byte == 0x0D { return }
            if out.isEmpty && byte <= 0x20 { return }
            out.append(lower(byte))
        }
        while k < raw.count {
            guard raw[k] == 0x26 else {
                append(raw[k])
                k += 1
                continue
            }
            var end = k + 1
            while end < raw.count, end - k < 40, raw[end] != 0x3B,
                isAlpha(raw[end]) || isHex(raw[end]) || raw[end] == 0x23
            {
                end += 1
            }
            let body = String(decoding: raw[(k + 1)..<end], as: UTF8.self).lowercased()
            let named: [String: UInt8] = ["colon": 0x3A, "tab": 0x09, "newline": 0x0A, "lpar": 0x28, "sol": 0x2F]
            var scalar: UInt32?
            if body.hasPrefix("#x") {
                scalar = UInt32(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                scalar = UInt32(body.dropFirst())
            } else {
                scalar = named[body].map(UInt32.init)
            }
            if let scalar, scalar < 0x80 {
                append(UInt8(scalar))
                k = end < raw.count && raw[end] == 0x3B ? end + 1 : end
            } else {
                append(raw[k])
                k += 1
            }
            if out.count >= 32 { break }
        }
        return out
    }
}
