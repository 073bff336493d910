import RxValidate

/// rxvault's own structural rules (AttachmentValidator.checkStructure): the ZIP directory search,
/// the HTML tokenizer, the PNG chunk walk, text budget, metadata stripping and the cutting of
/// image data that spells markup. Any input must be refused or give bytes to store, never crash.
/// What is stored must pass the same rules again unchanged (no second strip, no second cut), a
/// PDF is never cut, a cut file grows by 12 bytes a cut at most 8 times, and what was kept keeps
/// every byte given apart from the cuts' chunk headers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = ValidationLimits(maxChunkBytes: 1 << 20)
    for type in [AttachmentType.png, .pdf] {
        for keep in [false, true] {
            guard
                let (stored, dropped, splits) = try? AttachmentValidator.checkStructure(
                    bytes, type: type, limits: limits, keepMetadata: keep)
            else { continue }
            if type == .pdf && splits != 0 { fatalError("a PDF was cut") }
            if splits > 8 { fatalError("more than 8 cuts") }
            if stored.count > bytes.count + 12 * splits { fatalError("stored more than was given") }
            if keep || type == .pdf {
                if !dropped.isEmpty { fatalError("kept bytes dropped a chunk") }
                if stored.count != bytes.count + 12 * splits { fatalError("a cut is not 12 bytes") }
                if splits == 0 && stored != bytes { fatalError("kept bytes changed") }
            }
            let again: (stored: [UInt8], dropped: [String], splits: Int)
            do {
                again = try AttachmentValidator.checkStructure(stored, type: type, limits: limits, keepMetadata: keep)
            } catch {
                fatalError("what was stored is refused when checked again: \(error)")
            }
            if again.stored != stored || !again.dropped.isEmpty || again.splits != 0 {
                fatalError("checking what was stored changed it")
            }
        }
    }
    return 0
}
