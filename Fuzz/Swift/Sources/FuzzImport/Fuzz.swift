import RxVault

/// The import parsers (rxvault export JSON and FHIR R4): any input must give items or a refusal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? RxvaultExport.decode(bytes)
    _ = try? FHIR.decode(bytes)
    return 0
}
