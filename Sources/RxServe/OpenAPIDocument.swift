// Written by scripts/make-openapi from docs/openapi.json: edit that file, then run the script.

/// The API as an OpenAPI 3 document, served at `GET /openapi.json`; the same as
/// docs/openapi.json (RxServeTests/OpenAPITests; CI also checks the server against it with
/// schemathesis, so the document and the routes cannot drift).
enum OpenAPIDocument {
    static let text = #"""
        {
          "components": {
            "responses": {
              "Error": {
                "content": {
                  "application/fhir+json": {
                    "schema": {
                      "$ref": "#/components/schemas/OperationOutcome"
                    }
                  }
                },
                "description": "an OperationOutcome: 400 invalid, 401 login, 404 not-found, 405 not-supported, 413 too-costly, 429 throttled, 500 exception, 503 transient (docs/api.md, \"Errors\")"
              }
            },
            "schemas": {
              "AccessRequest": {
                "properties": {
                  "granted": {
                    "items": {
                      "type": "string"
                    },
                    "type": "array"
                  },
                  "id": {
                    "type": "string"
                  },
                  "status": {
                    "enum": [
                      "pending",
                      "answered"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "id",
                  "status"
                ],
                "type": "object"
              },
              "Bundle": {
                "properties": {
                  "entry": {
                    "items": {
                      "properties": {
                        "fullUrl": {
                          "type": "string"
                        },
                        "resource": {
                          "$ref": "#/components/schemas/Resource"
                        },
                        "search": {
                          "properties": {
                            "mode": {
                              "enum": [
                                "match",
                                "include"
                              ],
                              "type": "string"
                            }
                          },
                          "type": "object"
                        }
                      },
                      "type": "object"
                    },
                    "type": "array"
                  },
                  "link": {
                    "items": {
                      "properties": {
                        "relation": {
                          "type": "string"
                        },
                        "url": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "relation",
                        "url"
                      ],
                      "type": "object"
                    },
                    "type": "array"
                  },
                  "resourceType": {
                    "enum": [
                      "Bundle"
                    ],
                    "type": "string"
                  },
                  "total": {
                    "minimum": 0,
                    "type": "integer"
                  },
                  "type": {
                    "enum": [
                      "searchset",
                      "history"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "resourceType",
                  "type"
                ],
                "type": "object"
              },
              "Challenge": {
                "properties": {
                  "age": {
                    "type": "string"
                  },
                  "challenge": {
                    "type": "string"
                  },
                  "expires": {
                    "type": "string"
                  }
                },
                "required": [
                  "challenge",
                  "age",
                  "expires"
                ],
                "type": "object"
              },
              "OperationOutcome": {
                "properties": {
                  "issue": {
                    "items": {
                      "properties": {
                        "code": {
                          "type": "string"
                        },
                        "diagnostics": {
                          "type": "string"
                        },
                        "severity": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "severity",
                        "code"
                      ],
                      "type": "object"
                    },
                    "minItems": 1,
                    "type": "array"
                  },
                  "resourceType": {
                    "enum": [
                      "OperationOutcome"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "resourceType",
                  "issue"
                ],
                "type": "object"
              },
              "Patient": {
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "resourceType": {
                    "enum": [
                      "Patient"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "resourceType",
                  "id"
                ],
                "type": "object"
              },
              "Resource": {
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "resourceType": {
                    "type": "string"
                  }
                },
                "required": [
                  "resourceType"
                ],
                "type": "object"
              },
              "Token": {
                "properties": {
                  "access_token": {
                    "type": "string"
                  },
                  "client": {
                    "type": "string"
                  },
                  "expires_in": {
                    "type": "integer"
                  },
                  "token_type": {
                    "enum": [
                      "Bearer"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "access_token",
                  "token_type",
                  "expires_in"
                ],
                "type": "object"
              },
              "VisionPrescription": {
                "properties": {
                  "dateWritten": {
                    "type": "string"
                  },
                  "id": {
                    "type": "string"
                  },
                  "lensSpecification": {
                    "items": {
                      "type": "object"
                    },
                    "type": "array"
                  },
                  "meta": {
                    "properties": {
                      "lastUpdated": {
                        "type": "string"
                      },
                      "versionId": {
                        "type": "string"
                      }
                    },
                    "type": "object"
                  },
                  "resourceType": {
                    "enum": [
                      "VisionPrescription"
                    ],
                    "type": "string"
                  },
                  "status": {
                    "enum": [
                      "active",
                      "cancelled",
                      "draft",
                      "entered-in-error"
                    ],
                    "type": "string"
                  }
                },
                "required": [
                  "resourceType",
                  "id",
                  "status"
                ],
                "type": "object"
              }
            },
            "securitySchemes": {
              "bearer": {
                "description": "a token from POST /auth/token (15 minutes)",
                "scheme": "bearer",
                "type": "http"
              }
            }
          },
          "info": {
            "description": "The read-only FHIR R4 API of rxvault serve: the vision prescriptions the owner granted to a client app, their patients and attachments, and access requests. docs/api.md says everything this document does not. This document is served at GET /openapi.json and kept in docs/openapi.json; a test keeps them the same, and CI checks the server against it with schemathesis.",
            "title": "rxvault serve",
            "version": "1"
          },
          "openapi": "3.0.3",
          "paths": {
            "/Binary/{id}": {
              "get": {
                "operationId": "readBinary",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/pdf": {
                        "schema": {
                          "format": "binary",
                          "type": "string"
                        }
                      },
                      "image/png": {
                        "schema": {
                          "format": "binary",
                          "type": "string"
                        }
                      }
                    },
                    "description": "the file"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "an attachment's bytes"
              }
            },
            "/DocumentReference": {
              "get": {
                "operationId": "searchDocumentReference",
                "parameters": [
                  {
                    "description": "VisionPrescription/<id>",
                    "in": "query",
                    "name": "related",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Bundle"
                        }
                      }
                    },
                    "description": "a searchset Bundle"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "the attachments of granted prescriptions"
              }
            },
            "/Observation": {
              "get": {
                "operationId": "searchObservation",
                "parameters": [
                  {
                    "description": "Patient/<id> or <id>",
                    "in": "query",
                    "name": "patient",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Bundle"
                        }
                      }
                    },
                    "description": "a searchset Bundle of Observations"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "the measurements (axial length, visual acuity) of grants made with --measurements"
              }
            },
            "/Observation/{id}": {
              "get": {
                "operationId": "readObservation",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Resource"
                        }
                      }
                    },
                    "description": "the Observation"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "one granted measurement value"
              }
            },
            "/Patient/{id}": {
              "get": {
                "operationId": "readPatient",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Patient"
                        }
                      }
                    },
                    "description": "the Patient"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "the patient of a granted prescription"
              }
            },
            "/VisionPrescription": {
              "get": {
                "operationId": "searchVisionPrescription",
                "parameters": [
                  {
                    "description": "Patient/<id> or <id>",
                    "in": "query",
                    "name": "patient",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "YYYY-MM-DD after an optional eq, ge, le, gt or lt; may be repeated",
                    "in": "query",
                    "name": "datewritten",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "active, cancelled, draft, entered-in-error (comma-separated)",
                    "in": "query",
                    "name": "status",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "urn:rxvault:prescription|<id>, the id, or the owner's short id",
                    "in": "query",
                    "name": "identifier",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ after an optional prefix, compared with meta.lastUpdated: for this client, the latest of the newest version, its grant to this client and the attachments that grant includes",
                    "in": "query",
                    "name": "_lastUpdated",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "VisionPrescription:patient",
                    "in": "query",
                    "name": "_include",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "page size (0 to 200; more is 200); 0 is the total alone, with no next link",
                    "in": "query",
                    "name": "_count",
                    "required": false,
                    "schema": {
                      "minimum": 0,
                      "type": "integer"
                    }
                  },
                  {
                    "description": "where the page starts",
                    "in": "query",
                    "name": "_offset",
                    "required": false,
                    "schema": {
                      "minimum": 0,
                      "type": "integer"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Bundle"
                        }
                      }
                    },
                    "description": "a searchset Bundle"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "search the granted prescriptions"
              }
            },
            "/VisionPrescription/{id}": {
              "get": {
                "operationId": "readVisionPrescription",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/VisionPrescription"
                        }
                      }
                    },
                    "description": "the VisionPrescription"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "a granted prescription as it is now"
              }
            },
            "/VisionPrescription/{id}/_history": {
              "get": {
                "operationId": "historyVisionPrescription",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Bundle"
                        }
                      }
                    },
                    "description": "a history Bundle"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "the versions the grant covers"
              }
            },
            "/VisionPrescription/{id}/_history/{version}": {
              "get": {
                "operationId": "vreadVisionPrescription",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  },
                  {
                    "description": "the version number",
                    "in": "path",
                    "name": "version",
                    "required": true,
                    "schema": {
                      "minimum": 1,
                      "type": "integer"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/VisionPrescription"
                        }
                      }
                    },
                    "description": "the VisionPrescription"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "one version"
              }
            },
            "/access-requests": {
              "post": {
                "operationId": "requestAccess",
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "kinds": {
                            "items": {
                              "enum": [
                                "glasses",
                                "contacts"
                              ],
                              "type": "string"
                            },
                            "type": "array"
                          },
                          "patient": {
                            "type": "string"
                          },
                          "reason": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "reason"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "202": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/AccessRequest"
                        }
                      }
                    },
                    "description": "the request, pending"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "ask the owner for access"
              }
            },
            "/access-requests/{id}": {
              "get": {
                "operationId": "readAccessRequest",
                "parameters": [
                  {
                    "description": "the resource id (a UUID)",
                    "in": "path",
                    "name": "id",
                    "required": true,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/AccessRequest"
                        }
                      }
                    },
                    "description": "the request"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "what became of a request"
              }
            },
            "/auth/challenge": {
              "post": {
                "operationId": "challenge",
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "recipient": {
                            "description": "age1...",
                            "type": "string"
                          }
                        },
                        "required": [
                          "recipient"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Challenge"
                        }
                      }
                    },
                    "description": "an age file to open"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [],
                "summary": "ask for a challenge for a client's recipient"
              }
            },
            "/auth/token": {
              "post": {
                "operationId": "token",
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "challenge": {
                            "type": "string"
                          },
                          "response": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "challenge",
                          "response"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Token"
                        }
                      }
                    },
                    "description": "a bearer token"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [],
                "summary": "answer a challenge for a token"
              }
            },
            "/metadata": {
              "get": {
                "operationId": "metadata",
                "responses": {
                  "200": {
                    "content": {
                      "application/fhir+json": {
                        "schema": {
                          "$ref": "#/components/schemas/Resource"
                        }
                      }
                    },
                    "description": "the CapabilityStatement"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [],
                "summary": "what this server supports (a CapabilityStatement)"
              }
            },
            "/openapi.json": {
              "get": {
                "operationId": "openapi",
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    },
                    "description": "the OpenAPI document"
                  },
                  "default": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [],
                "summary": "this document"
              }
            }
          },
          "servers": [
            {
              "url": "http://localhost"
            }
          ]
        }

        """#
}
