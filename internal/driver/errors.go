package driver

import (
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// CARotationNotSupported is the base driver's refusal of a CA rotation.
//
// Magnum: magnum/drivers/common/driver.py:306 raises NotSupported with a
// literal message, so the text is the whole message (no "is not
// supported." suffix added).
func CARotationNotSupported() *magnum.Error {
	return magnum.NotSupportedMessage("'rotate_ca_certificate' is not supported by this driver.")
}

// CredentialRotationNotSupported is the conductor's answer when the driver
// does not implement credential rotation.
//
// Magnum: magnum/conductor/handlers/credential_conductor.py:56 raises
// NotSupported(message=...), a literal message.
func CredentialRotationNotSupported() *magnum.Error {
	return magnum.NotSupportedMessage("Credential rotation is not supported by driver.")
}

// ValidateMasterSize is the base driver's rule for the master count of a new
// cluster: odd and at least 1, else 400 MasterNGSizeInvalid. Drivers without
// a rule of their own call it.
func ValidateMasterSize(count int) error {
	if count%2 == 0 || count < 1 {
		return magnum.MasterNGSizeInvalid(count)
	}
	return nil
}
