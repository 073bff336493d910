import Foundation
import HTTPTypes
import RxModel
import RxTestSupport
import Testing

@testable import RxServe
@testable import RxVault

/// A client that keeps a copy of what it was granted and asks what changed since
/// (docs/api.md, "Keeping a copy in step"): for a client, a prescription's last update is the
/// latest of its newest version, its grant to that client and the attachments that grant
/// includes. `_lastUpdated` compares that time and `meta.lastUpdated` says it, so a client that
/// stores `meta.lastUpdated` and asks `gt` it sees each change once, when it happened, and
/// nothing another client's grants did.
@Suite struct KeepingInStepTests {
    /// Each step is 10 seconds after the one before (the owner's and the server's clock: times
    /// are whole seconds), so a change falls after the time a client stored and before the next.
    @Test func theSyncLoopSeesGrantsAttachmentsAndReKeysWhenTheyHappen() async throws {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        let contacts = try vault.add(ServedVault.contacts)
        let glassesID = FHIR.prescriptionResourceID(glasses.id)
        let contactsID = FHIR.prescriptionResourceID(contacts.id)
        for name in ["shop", "family", "clinic"] { try vault.addClient(name) }
        vault.clock.advance(seconds: 10)
        try vault.grant("shop", [glasses.id])
        try vault.grant("family", [glasses.id], attachments: false)

        try await vault.serve { api in
            let shop = try await api.token("shop")
            let family = try await api.token("family")
            /// What `_lastUpdated=gt<since>` answers: id -> meta.lastUpdated.
            func changed(_ token: String, since: String) async throws -> [String: String] {
                let answer = try await api.get("/VisionPrescription?_lastUpdated=gt\(since)", token: token)
                #expect(answer.status == .ok, "\(answer.text)")
                return Self.lastUpdated(answer.resources)
            }
            /// A full listing: id -> meta.lastUpdated.
            func everything(_ token: String) async throws -> [String: String] {
                Self.lastUpdated(try await api.get("/VisionPrescription", token: token).resources)
            }
            /// What a read of one says.
            func read(_ token: String, _ id: String) async throws -> String? {
                let answer = try await api.get("/VisionPrescription/\(id)", token: token)
                return (answer.json["meta"] as? [String: Any])?["lastUpdated"] as? String
            }

            // The first sync: everything, and the newest time is where the next one starts.
            var shopHas = try await everything(shop)
            var shopSince = try #require(shopHas.values.max())
            let familyHas = try await everything(family)
            let familySince = try #require(familyHas.values.max())
            #expect(Set(shopHas.keys) == [glassesID] && Set(familyHas.keys) == [glassesID])
            #expect(try await changed(shop, since: shopSince).isEmpty, "nothing changed since")

            // A prescription recorded long ago, granted now: it is new to the shop.
            vault.clock.advance(seconds: 10)
            try vault.grant("shop", [contacts.id])
            var news = try await changed(shop, since: shopSince)
            #expect(Set(news.keys) == [contactsID], "the grant is a change for the shop: \(news)")
            let grantedAt = try #require(news[contactsID])
            #expect(grantedAt > shopSince && grantedAt > contacts.recorded)
            #expect(try await read(shop, contactsID) == grantedAt, "a read says what the search said")
            shopHas.merge(news) { $1 }
            shopSince = try #require(shopHas.values.max())
            #expect(try await changed(shop, since: shopSince).isEmpty)

            // An attachment added to a granted prescription: a change for a client whose grant
            // includes attachments, none for one whose grant does not.
            vault.clock.advance(seconds: 10)
            try vault.attach(to: glasses.id)
            news = try await changed(shop, since: shopSince)
            #expect(Set(news.keys) == [glassesID], "\(news)")
            let attachedAt = try #require(news[glassesID])
            #expect(attachedAt > shopSince)
            #expect(try await read(shop, glassesID) == attachedAt)
            let history = try await api.get("/VisionPrescription/\(glassesID)/_history", token: shop)
            #expect(
                (history.resources.first?["meta"] as? [String: Any])?["lastUpdated"] as? String == attachedAt,
                "the newest version in the history, as the read gives it")
            #expect(try await changed(family, since: familySince).isEmpty, "the family may not read attachments")
            #expect(try await read(family, glassesID) == familyHas[glassesID])
            shopHas.merge(news) { $1 }
            shopSince = try #require(shopHas.values.max())

            // Another client's grant changes nothing this one sees, not even the time.
            vault.clock.advance(seconds: 10)
            try vault.grant("clinic", [glasses.id, contacts.id])
            #expect(try await changed(shop, since: shopSince).isEmpty)
            #expect(try await changed(family, since: familySince).isEmpty)
            #expect(try await everything(shop) == shopHas)

            // Another client's removal re-keys what it held: a new version, a change for every
            // client that holds it, with its new versionId.
            vault.clock.advance(seconds: 10)
            try vault.owner.removeClient(try vault.client("clinic"))
            news = try await changed(shop, since: shopSince)
            #expect(Set(news.keys) == [glassesID, contactsID], "\(news)")
            #expect(news.values.allSatisfy { $0 > shopSince })
            let reKeyed = try await api.get("/VisionPrescription/\(contactsID)", token: shop)
            #expect((reKeyed.json["meta"] as? [String: Any])?["versionId"] as? String == "2")
            #expect(Set(try await changed(family, since: familySince).keys) == [glassesID])
            shopHas.merge(news) { $1 }
            shopSince = try #require(shopHas.values.max())

            // A revoke: the prescription is gone from the shop's view, as one that never existed
            // is; no `_lastUpdated` brings it back, and listing the ids is how a client learns.
            vault.clock.advance(seconds: 10)
            try vault.owner.revoke(try vault.client("shop"), [contacts.id])
            #expect(try await changed(shop, since: "2000-01-01T00:00:00Z").keys.sorted() == [glassesID])
            #expect(try await changed(shop, since: shopSince).isEmpty, "the revoke re-keys only what the shop lost")
            #expect(Set(try await everything(shop).keys) == [glassesID])
            let revoked = try await api.get("/VisionPrescription/\(contactsID)", token: shop)
            let missing = try await api.get("/VisionPrescription/00000000-0000-5000-8000-000000000000", token: shop)
            #expect(revoked.status == .notFound && revoked.body == missing.body)
        }
    }

    /// `ge` a day, `le` and `lt` compare the same time the resource carries.
    @Test func everyComparisonUsesTheClientsTime() async throws {
        let vault = try ServedVault()
        let glasses = try vault.add(ServedVault.glasses)
        try vault.addClient("shop")
        vault.clock.advance(seconds: 30)
        try vault.grant("shop", [glasses.id])
        try await vault.serve { api in
            let token = try await api.token("shop")
            let listed = try await api.get("/VisionPrescription", token: token)
            let time = try #require(Self.lastUpdated(listed.resources).values.first)
            #expect(time > glasses.recorded, "the grant came after the version")
            for (query, count) in [
                ("eq\(time)", 1), ("ge\(time)", 1), ("le\(time)", 1), ("gt\(time)", 0), ("lt\(time)", 0),
                ("le\(glasses.recorded)", 0), ("gt\(glasses.recorded)", 1)
            ] {
                let answer = try await api.get("/VisionPrescription?_lastUpdated=\(query)", token: token)
                #expect(answer.total == count, "\(query): \(answer.text)")
            }
        }
    }

    static func lastUpdated(_ resources: [[String: Any]]) -> [String: String] {
        var times: [String: String] = [:]
        for resource in resources {
            guard let id = resource["id"] as? String,
                let time = (resource["meta"] as? [String: Any])?["lastUpdated"] as? String
            else { continue }
            times[id] = time
        }
        return times
    }
}
