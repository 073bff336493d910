import RxValidate

/// rxvault's own structural rules (AttachmentValidator.checkStructure): the ZIP directory search,
/// the HTML tokenizer, the PNG chunk walk, text budget and metadata stripping. Any input must be
/// refused or give bytes to store, never crash; what is stored from a PNG must walk again to the
/// same chunks (stripping twice changes nothing, and what was stored needs no cut of its image
/// data) and never hold more than was given, beyond 12 bytes per cut.
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
            if stored.count > bytes.count + 12 * splits { fatalError("stored more than was given") }
            if keep || type == .pdf {
                if (stored != bytes && splits == 0) || !dropped.isEmpty { fatalError("kept bytes changed") }
            } else if let again = try? AttachmentValidator.checkStructure(
                stored, type: .png, limits: limits, keepMetadata: false)
            {
                if again.stored != stored || !again.dropped.isEmpty || again.splits != 0 {
                    fatalError("stripping twice changed the file")
                }
            }
        }
    }
    return 0
}
