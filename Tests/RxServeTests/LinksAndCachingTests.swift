import Foundation
import HTTPTypes
import RxModel
import RxTestSupport
import Testing

@testable import RxServe
@testable import RxVault

/// Where the links of an answer point, and that no answer may be kept by a cache on the way.
/// The forwarded headers of a trusted proxy and the Host header need a real peer and a real
/// socket: `CLITests/ServeLinkTests` tests them on a live `rxvault serve`.
@Suite struct LinksAndCachingTests {
    func household() throws -> (ServedVault, glasses: PrescriptionRecord, contacts: PrescriptionRecord) {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        let contacts = try vault.add(ServedVault.contacts)
        try vault.attach(to: glasses.id)
        try vault.addClient("shop")
        try vault.grant("shop", [glasses.id, contacts.id])
        try vault.owner.grant(
            try vault.client("shop"), [glasses.id], expires: nil, attachments: nil, measurements: true)
        try vault.owner.addMeasurement(
            EyeMeasurement(
                id: "", date: CalendarDate(iso: "2026-05-01")!, axialLengthRight: Hundredths(raw: 2410),
                axialLengthLeft: Hundredths(raw: 2398)),
            patient: try vault.owner.findPatient(glasses.prescription.patient.name).id)
        return (vault, glasses, contacts)
    }

    static func links(_ answer: APIClient.Answer) -> [String: String] {
        (answer.json["link"] as? [[String: Any]] ?? []).reduce(into: [:]) {
            $0[$1["relation"] as? String ?? ""] = $1["url"] as? String
        }
    }

    /// A page of 0 is the total alone: no `next` or `previous`, which would be the same page, and
    /// a client following `next` until there is none would never stop (issue 47).
    @Test func aPageOfNoneLinksToNoOtherPage() async throws {
        let (vault, _, _) = try household()
        try await vault.serve { api in
            let token = try await api.token("shop")
            for query in ["_count=0", "_count=0&_offset=1", "_count=0&_offset=5"] {
                let answer = try await api.get("/VisionPrescription?\(query)", token: token)
                #expect(answer.status == .ok && answer.total == 2 && answer.resources.isEmpty, "\(answer.text)")
                #expect(Array(Self.links(answer).keys) == ["self"], "\(query): \(answer.text)")
            }
            // Pages of one still link both ways.
            let second = try await api.get("/VisionPrescription?_count=1&_offset=1", token: token)
            #expect(Set(Self.links(second).keys) == ["self", "previous"], "\(second.text)")
        }
    }
}
