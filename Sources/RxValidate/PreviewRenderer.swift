import CRxValidate

/// Renders a downscaled PNG of an accepted attachment (the image itself, or a PDF's first page),
/// so a person can look at what is stored. Runs in the isolated child, like the validator.
public enum PreviewRenderer {
    public static let defaultWidth: UInt32 = 800
    public static let widthRange: ClosedRange<UInt32> = 16...4096

    public static func render(_ bytes: [UInt8], width: UInt32, limits: ValidationLimits) throws(AttachmentRefusal)
        -> [UInt8]
    {
        let checked = try AttachmentValidator.validate(bytes, limits: limits)
        var message = [CChar](repeating: 0, count: Int(RX_MESSAGE_SIZE))
        var rgba: UnsafeMutablePointer<UInt8>?
        var w: UInt32 = 0
        var h: UInt32 = 0
        switch checked.type {
        case .png:
            var result = rx_png_result()
            var c = AttachmentValidator.pngLimits(limits)
            let status = bytes.withUnsafeBufferPointer { rx_png_check($0.baseAddress, $0.count, &c, &result, &rgba) }
            guard status == 0, let pixels = rgba else {
                throw AttachmentRefusal(.parserFailed, "cannot decode the image")
            }
            defer { free(pixels) }
            let (scaled, sw, sh) = downscale(pixels, width: result.width, height: result.height, to: width)
            return try encode(scaled, width: sw, height: sh)
        case .pdf:
            let status = bytes.withUnsafeBufferPointer {
                rx_pdf_render_first_page($0.baseAddress, $0.count, width, &rgba, &w, &h, &message)
            }
            guard status == 0, let pixels = rgba else {
                throw AttachmentRefusal(.parserFailed, "cannot render the first page: \(text(message))")
            }
            defer { free(pixels) }
            return try encode(
                Array(UnsafeBufferPointer(start: pixels, count: Int(w) * Int(h) * 4)), width: w, height: h)
        }
    }

    /// The C side's NUL-terminated message.
    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Box-filter downscale of RGBA pixels to `target` width (never upscales).
    static func downscale(_ pixels: UnsafeMutablePointer<UInt8>, width: UInt32, height: UInt32, to target: UInt32) -> (
        [UInt8], UInt32, UInt32
    ) {
        guard width > target else {
            return (Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 4)), width, height)
        }
        let outW = Int(target)
        let outH = max(1, Int((Double(height) * Double(target) / Double(width)).rounded()))
        let w = Int(width)
        let h = Int(height)
        var out = [UInt8](repeating: 0, count: outW * outH * 4)
        for oy in 0..<outH {
            let y0 = oy * h / outH
            let y1 = max(y0 + 1, (oy + 1) * h / outH)
            for ox in 0..<outW {
                let x0 = ox * w / outW
                let x1 = max(x0 + 1, (ox + 1) * w / outW)
                var sum = (0, 0, 0, 0)
                for y in y0..<y1 {
                    var p = (y * w + x0) * 4
                    for _ in x0..<x1 {
                        sum.0 += Int(pixels[p])
                        sum.1 += Int(pixels[p + 1])
                        sum.2 += Int(pixels[p + 2])
                        sum.3 += Int(pixels[p + 3])
                        p += 4
                    }
                }
                let n = (y1 - y0) * (x1 - x0)
                let o = (oy * outW + ox) * 4
                out[o] = UInt8(sum.0 / n)
                out[o + 1] = UInt8(sum.1 / n)
                out[o + 2] = UInt8(sum.2 / n)
                out[o + 3] = UInt8(sum.3 / n)
            }
        }
        return (out, UInt32(outW), UInt32(outH))
    }

    static func encode(_ rgba: [UInt8], width: UInt32, height: UInt32) throws(AttachmentRefusal) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: Int(RX_MESSAGE_SIZE))
        let status = rgba.withUnsafeBufferPointer {
            rx_png_encode_rgba($0.baseAddress, width, height, &out, &length, &message)
        }
        guard status == 0, let out else {
            throw AttachmentRefusal(.parserFailed, "cannot write the preview: \(text(message))")
        }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
