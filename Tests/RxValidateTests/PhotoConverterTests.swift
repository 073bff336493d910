import CRxValidate
import Foundation
import RxTestSupport
import RxValidate
import Testing

/// The phone-photo converter in-process (the child runs exactly this): orientation, scaling,
/// metadata dropped, and refusals, on the committed fixtures (Fixtures/photos, made by
/// scripts/make-photo-fixtures with cjpeg and heif-enc).
@Suite struct PhotoConverterTests {
    static let folder = FixtureVerdictTests.root.appendingPathComponent("Fixtures/photos")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func convert(_ name: String, fullSize: Bool = false) throws -> (PhotoConversion, [UInt8]) {
        try PhotoConverter.convert(try bytes(name), limits: ValidationLimits(), fullSize: fullSize)
    }

    /// The RGBA pixel at (x, y), decoded by the validator's own PNG reader.
    static func pixel(_ png: [UInt8], _ x: Int, _ y: Int) throws -> [UInt8] {
        var result = rx_png_result()
        var limits = rx_png_limits(
            max_width: 16384, max_height: 16384, max_pixels: 50_000_000, max_chunk_bytes: 8 << 20)
        var rgba: UnsafeMutablePointer<UInt8>?
        let status = png.withUnsafeBufferPointer { rx_png_check($0.baseAddress, $0.count, &limits, &result, &rgba) }
        #expect(status == 0)
        let pixels = try #require(rgba)
        defer { free(pixels) }
        let at = (y * Int(result.width) + x) * 4
        return Array(UnsafeBufferPointer(start: pixels + at, count: 3))
    }

    /// Near a colour (JPEG is lossy; the fixture's quadrants are flat, so corners are close).
    static func near(_ got: [UInt8], _ want: [UInt8]) -> Bool {
        zip(got, want).allSatisfy { abs(Int($0) - Int($1)) < 40 }
    }

    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255],
        white: [UInt8] = [255, 255, 255]

    @Test func orientationSixIsTurnedClockwise() throws {
        // Stored 64x32: red top-left, green top-right, blue bottom-left, white bottom-right.
        let (conversion, png) = try Self.convert("orientation-6.jpg")
        #expect(conversion.orientation == 6 && conversion.width == 32 && conversion.height == 64)
        #expect(Self.near(try Self.pixel(png, 1, 1), Self.blue))
        #expect(Self.near(try Self.pixel(png, 30, 1), Self.red))
        #expect(Self.near(try Self.pixel(png, 30, 62), Self.green))
        #expect(Self.near(try Self.pixel(png, 1, 62), Self.white))
    }

    @Test func orientationThreeIsTurnedUpsideDown() throws {
        let (conversion, png) = try Self.convert("orientation-3.jpg")
        #expect(conversion.orientation == 3 && conversion.width == 64 && conversion.height == 32)
        #expect(Self.near(try Self.pixel(png, 1, 1), Self.white))
        #expect(Self.near(try Self.pixel(png, 62, 30), Self.red))
    }

    @Test func aTwelveMegapixelPhotoIsScaledUnlessFullSize() throws {
        let (scaled, small) = try Self.convert("phone-12mp.jpg")
        #expect(scaled.sourceWidth == 4032 && scaled.sourceHeight == 3024)
        #expect(scaled.width == PhotoConverter.defaultLongestSide && scaled.height == 1536)
        let (full, large) = try Self.convert("phone-12mp.jpg", fullSize: true)
        #expect(full.width == 4032 && full.height == 3024)
        #expect(small.count < large.count)
        // What was written is a PNG the validator accepts at that size.
        let checked = try AttachmentValidator.validate(small, limits: ValidationLimits())
        #expect(checked.type == .png && checked.width == 2048 && checked.height == 1536)
    }

    /// Nothing of the EXIF block (camera, time, GPS) reaches the PNG: only IHDR, IDAT, IEND, and
    /// none of the fixture's marker strings or GPS coordinate bytes.
    @Test(arguments: ["phone-gps.jpg", "phone-gps-progressive.jpg", "phone-gps.heic"])
    func metadataIsDropped(_ name: String) throws {
        let original = try Self.bytes(name)
        let traces = PhotoTraces.all
        #expect(
            traces.allSatisfy { PhotoTraces.contains(original, $0) },
            "the fixture must carry the EXIF it is meant to test")
        let (conversion, png) = try Self.convert(name)
        #expect(conversion.from == (name.hasSuffix(".heic") ? .heic : .jpeg))
        let chunks = pngChunkTypes(png)
        #expect(chunks.first == "IHDR" && chunks.last == "IEND" && Set(chunks) == ["IHDR", "IDAT", "IEND"], "\(chunks)")
        for trace in traces { #expect(!PhotoTraces.contains(png, trace), "found \(trace) in the converted PNG") }
    }

    @Test func refusals() throws {
        func refused(_ bytes: [UInt8]) -> AttachmentRefusal? {
            do throws(AttachmentRefusal) {
                _ = try PhotoConverter.convert(bytes, limits: ValidationLimits(), fullSize: false)
                return nil
            } catch { return error }
        }
        func refusal(_ name: String) throws -> AttachmentRefusal? { refused(try Self.bytes(name)) }
        let truncated = try #require(try refusal("truncated.jpg"))
        #expect(truncated.reason == .corrupt && truncated.message == "JPEG data is corrupt: Premature end of JPEG file")
        let huge = try #require(try refusal("huge-declared.jpg"))
        #expect(huge.reason == .limit && huge.message == "JPEG image is 60000x60000: over the 16384-pixel side limit")
        let text = try #require(try refusal("not-really.jpg"))
        #expect(text.reason == .corrupt, "\(text)")
        let heic = try #require(try refusal("truncated.heic"))
        #expect(heic.reason == .corrupt && heic.message.hasPrefix("HEIC data is corrupt: "), "\(heic)")
        let png = try #require(refused(Array("hello".utf8)))
        #expect(png.reason == .notPNGOrPDF)
    }

    @Test func exifOrientationReaderStaysInBounds() {
        // Big-endian TIFF whose IFD0 claims 0xFFFF entries in a 20-byte block: read nothing past it.
        let app1: [UInt8] =
            Array("Exif".utf8) + [0, 0] + Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0xFF, 0xFF, 1, 18, 0, 3]
        #expect(app1.withUnsafeBufferPointer { rx_exif_orientation($0.baseAddress, $0.count) } == 1)
        let good: [UInt8] =
            Array("Exif".utf8) + [0, 0] + Array("II".utf8) + [
                42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0
            ]
        #expect(good.withUnsafeBufferPointer { rx_exif_orientation($0.baseAddress, $0.count) } == 8)
    }
}

/// What the fixtures' EXIF holds (scripts/make-photo-fixtures) that must never be stored.
enum PhotoTraces {
    static let all: [[UInt8]] = [
        Array("Exif\0\0".utf8), Array("RxvaultTestCam".utf8), Array("Phone 12 Fixture".utf8), Array("WGS-84".utf8),
        Array("GPS-FIXTURE-TRACE".utf8), Array("2026:03:01 10:15:00".utf8),
        // GPSLatitude's seconds, 2616/100, as the big-endian rational the file stores.
        [0, 0, 0x0A, 0x38, 0, 0, 0, 100]
    ]

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
